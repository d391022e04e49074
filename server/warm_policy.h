// The warm pool's policy (warm_pool.h): when replacements of a function's
// warm executables start, and when dying ones are given up. Pure logic on
// plain values, unit-tested without processes (tests/server/policy_test.cc,
// restart_policy_test.cc).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>

namespace ninf::server {

// When the warm pool replaces a function's warm executables that died while
// idle, and when it gives up.
//
// A death is "early" when the process was younger than kEarlyDeath, and a
// failed spawn counts as one. Each death asks for a restart, granted at most
// once per kRestartInterval; after kMaxEarlyDeaths early deaths in a row the
// function is given up, so a program that crashes at start-up never makes a
// fork loop. A process that lives until a call takes it, or dies old, ends
// the series.
class RestartPolicy {
 public:
  using Clock = std::chrono::steady_clock;

  static constexpr int kMaxEarlyDeaths = 5;
  static constexpr Clock::duration kEarlyDeath = std::chrono::seconds(10);
  static constexpr Clock::duration kRestartInterval = std::chrono::seconds(1);

  // An idle process died `age` after it was started. Returns true when this
  // death made the policy give up.
  bool OnIdleDeath(Clock::duration age);

  // Starting a process failed. Returns true when the policy gave up now.
  bool OnSpawnFailed() { return OnIdleDeath(Clock::duration::zero()); }

  // A process lived until a call took it: the series of early deaths ends.
  void OnTaken() { early_deaths_ = 0; }

  // When the pending restart may happen; nothing if none is pending.
  std::optional<Clock::time_point> Due() const;

  // Whether the pending restart may happen at `now`; if so it is recorded
  // (and no longer pending).
  bool TakeRestart(Clock::time_point now);

  bool given_up() const { return given_up_; }
  int early_deaths() const { return early_deaths_; }

 private:
  int early_deaths_ = 0;  // consecutive
  bool given_up_ = false;
  bool pending_ = false;
  std::optional<Clock::time_point> last_restart_;
};

// What to do about a function's warm executables once a call was handed
// off. The next call should find one waiting, but a replacement's start-up
// is CPU work too (an OpenBLAS-linked executable spins its threads up for a
// moment): while the running jobs hold every core it waits until a call ends.
enum class WarmAction {
  kNothing,       // a warm executable is still idle
  kReplenishNow,  // start replacements now
  kArm,           // remember the function; start them when a call ends
};
// `comes_back`: the executable is reusable and returns to the pool after
// the call, so nothing is started for it now (only armed).
// `threads_held`: by the running calls, this one included.
WarmAction WarmAfterHandoff(bool took_warm, bool comes_back, std::size_t idle_left,
                            int threads_held, int cores);

}  // namespace ninf::server
