#include "server/warm_policy.h"

namespace ninf::server {

bool RestartPolicy::OnIdleDeath(Clock::duration age) {
  if (given_up_) return false;
  if (age >= kEarlyDeath) {
    early_deaths_ = 0;  // it ran fine for a long while: killed, not broken
  } else if (++early_deaths_ >= kMaxEarlyDeaths) {
    given_up_ = true;
    pending_ = false;
    return true;
  }
  pending_ = true;
  return false;
}

std::optional<RestartPolicy::Clock::time_point> RestartPolicy::Due() const {
  if (!pending_) return std::nullopt;
  // The first restart may happen at once.
  if (!last_restart_) return Clock::time_point::min();
  return *last_restart_ + kRestartInterval;
}

bool RestartPolicy::TakeRestart(Clock::time_point now) {
  std::optional<Clock::time_point> due = Due();
  if (!due || now < *due) return false;
  pending_ = false;
  last_restart_ = now;
  return true;
}

WarmAction WarmAfterHandoff(bool took_warm, bool comes_back, std::size_t idle_left,
                            int threads_held, int cores) {
  if (took_warm && idle_left > 0) return WarmAction::kNothing;
  if (comes_back) return WarmAction::kArm;
  const bool core_free = threads_held < cores;
  return core_free ? WarmAction::kReplenishNow : WarmAction::kArm;
}

}  // namespace ninf::server
