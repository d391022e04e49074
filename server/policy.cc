#include "server/policy.h"

#include <algorithm>
#include <cassert>
#include <csignal>

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

const char *JobStateName(JobState state) {
  switch (state) {
    case JobState::kNew:
      return "new";
    case JobState::kQueued:
      return "queued";
    case JobState::kStarting:
      return "starting";
    case JobState::kReceiving:
      return "receiving";
    case JobState::kComputing:
      return "computing";
    case JobState::kReplying:
      return "replying";
    case JobState::kIdle:
      return "idle";
    case JobState::kDone:
      return "done";
    case JobState::kEnded:
      return "ended";
  }
  return "?";
}

bool HoldsSlot(JobState state) {
  switch (state) {
    case JobState::kStarting:
    case JobState::kReceiving:
    case JobState::kComputing:
    case JobState::kReplying:
    case JobState::kDone:  // until the one-shot executable is gone or released
      return true;
    case JobState::kNew:
    case JobState::kQueued:
    case JobState::kIdle:
    case JobState::kEnded:
      return false;
  }
  return false;
}

bool CallOpen(JobState state) {
  switch (state) {
    case JobState::kReceiving:
    case JobState::kComputing:
    case JobState::kReplying:
      return true;
    case JobState::kNew:
    case JobState::kQueued:
    case JobState::kStarting:
    case JobState::kIdle:
    case JobState::kDone:
    case JobState::kEnded:
      return false;
  }
  return false;
}

bool HangupCancels(JobState state) { return CallOpen(state) && state != JobState::kReplying; }

uint32_t HeartbeatPeriodMs(uint32_t requested_ms, uint32_t liveness_ms) {
  uint32_t period = requested_ms ? std::min(requested_ms, liveness_ms) : liveness_ms;
  return std::max(period, kMinHeartbeatMs);
}

Verdict Watch(const WatchFacts &job, const WatchLimits &limits) {
  switch (job.state) {
    case JobState::kReceiving:
    case JobState::kComputing:
    case JobState::kReplying:
      if (limits.wall_ms > 0 && job.in_call_ms > limits.wall_ms) return Verdict::kWallLimit;
      // Computing moves no call data; heartbeats and the wall-clock budget
      // watch it instead.
      if (job.state != JobState::kComputing && job.since_progress_ms > limits.transfer_ms)
        return Verdict::kStalled;
      return Verdict::kKeep;
    case JobState::kIdle:
      return job.idle_ms > limits.handle_idle_ms ? Verdict::kIdleExpired : Verdict::kKeep;
    case JobState::kNew:
    case JobState::kQueued:
    case JobState::kStarting:
    case JobState::kDone:
    case JobState::kEnded:
      return Verdict::kKeep;
  }
  return Verdict::kKeep;
}

std::vector<uint64_t> IdleHandlesToStop(std::vector<IdleHandle> idle, std::size_t max_count,
                                        uint64_t max_bytes) {
  std::sort(idle.begin(), idle.end(),
            [](const IdleHandle &a, const IdleHandle &b) { return a.idle_ms > b.idle_ms; });
  uint64_t bytes = 0;
  for (const IdleHandle &h : idle) bytes += h.rss_bytes;
  std::vector<uint64_t> stop;
  std::size_t left = idle.size();
  for (const IdleHandle &h : idle) {
    if (left <= max_count && bytes <= max_bytes) break;
    stop.push_back(h.job);
    --left;
    bytes -= h.rss_bytes;
  }
  return stop;
}

std::optional<uint64_t> ConnectionToReplace(const std::vector<ConnectionFacts> &candidates) {
  const ConnectionFacts *oldest = nullptr;
  for (const ConnectionFacts &c : candidates)
    if (c.reading && c.requests == 0 && (!oldest || c.opened_seq < oldest->opened_seq)) oldest = &c;
  if (!oldest) return std::nullopt;
  return oldest->id;
}

WarmAction WarmAfterHandoff(bool took_warm, bool comes_back, std::size_t idle_left,
                            int threads_held, int cores) {
  if (took_warm && idle_left > 0) return WarmAction::kNothing;
  if (comes_back) return WarmAction::kArm;
  const bool core_free = threads_held < cores;
  return core_free ? WarmAction::kReplenishNow : WarmAction::kArm;
}

bool MayReuse(const ReuseFacts &f) {
  if (f.persistent || !f.function_allows || f.stopping) return false;
  if (f.max_calls > 0 && f.served >= static_cast<uint64_t>(f.max_calls)) return false;
  return f.max_age_ms <= 0 || f.age_ms < f.max_age_ms;
}

Ending DescribeEnding(const JobFacts &job, EndReason reason, const Status &why) {
  Ending e;
  switch (reason) {
    case EndReason::kReleased:  // counted at CALL_DONE; the connection just closes
      e.counted = false;
      return e;
    case EndReason::kQueueFull:
      e.outcome = CallOutcome::kRejected;
      e.tell = Status(NINF_ERR_SERVER, "server busy: " + std::to_string(job.queued) +
                                           " calls already wait for a slot (queue_limit)");
      return e;
    case EndReason::kRefused:
      e.outcome = CallOutcome::kRejected;
      e.tell = Status(NINF_ERR_SHUTTING_DOWN, "the server is shutting down");
      return e;
    case EndReason::kHangup:
      e.outcome = CallOutcome::kCancelled;
      return e;
    case EndReason::kSpawnFailed:
    case EndReason::kNoArguments:
      e.outcome = CallOutcome::kFailed;
      e.tell = why;
      return e;
    case EndReason::kExited:
      break;
  }
  // An executable that exits between calls (or after its last one) leaves
  // nothing to count: its calls were counted at CALL_DONE.
  if (!CallOpen(job.state)) {
    e.counted = false;
    // An idle persistent executable ended by the server: its client learns
    // why when it reads the answer to its next call (and a handle starts a
    // new executable when it reads NINF_ERR_EXPIRED).
    if (job.persistent && job.kill_reason == KillReason::kShutdown)
      e.tell = Status(NINF_ERR_SHUTTING_DOWN, "the server is shutting down");
    if (job.persistent && job.kill_reason == KillReason::kIdleExpired)
      e.tell = Status(NINF_ERR_EXPIRED, job.kill_detail);
    return e;
  }
  if (job.kill_reason == KillReason::kClientGone) {
    e.outcome = CallOutcome::kCancelled;
    return e;
  }
  e.outcome = CallOutcome::kFailed;
  // Once the executable began its reply nothing can be said: a frame cannot
  // be injected into the middle of another.
  if (job.state == JobState::kReplying) return e;
  switch (job.kill_reason) {
    case KillReason::kShutdown:
      e.tell = Status(NINF_ERR_SHUTTING_DOWN,
                      "the server shut down before '" + job.function + "' finished");
      return e;
    case KillReason::kStalled:
      e.tell = Status(NINF_ERR_TIMEOUT, job.kill_detail);
      return e;
    case KillReason::kWallLimit:
      e.tell = Status(NINF_ERR_LIMIT, job.kill_detail);
      return e;
    case KillReason::kNone:
    case KillReason::kClientGone:
    case KillReason::kIdleExpired:
      break;
  }
  if (job.term_signal == SIGXCPU && job.cpu_limit_seconds > 0)
    e.tell = Status(NINF_ERR_LIMIT, "'" + job.function + "' exceeded its CPU limit of " +
                                        std::to_string(job.cpu_limit_seconds) + " s");
  else
    e.tell = Status(NINF_ERR_EXECUTABLE,
                    "executable for '" + job.function + "' died: " + job.exit_description);
  return e;
}

}  // namespace ninf::server
