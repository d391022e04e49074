#include "server/watch_policy.h"

#include <algorithm>

namespace ninf::server {

uint32_t HeartbeatPeriodMs(uint32_t requested_ms, uint32_t liveness_ms) {
  uint32_t period = requested_ms ? std::min(requested_ms, liveness_ms) : liveness_ms;
  return std::max(period, kMinHeartbeatMs);
}

Verdict Watch(const WatchFacts &job, const WatchLimits &limits) {
  switch (job.state) {
    case JobState::kReceiving:
    case JobState::kComputing:
    case JobState::kReplying:
    case JobState::kArriving:
      // A handle's call waiting for room reads nothing yet, as a call
      // waiting before its hand-off (kArrivalQueued); its executable beats.
      if (job.state == JobState::kArriving && job.awaits_room) return Verdict::kKeep;
      if (limits.wall_ms > 0 && job.in_call_ms > limits.wall_ms) return Verdict::kWallLimit;
      // Computing moves no call data; heartbeats and the wall-clock budget
      // watch it instead.
      if (MovesCallData(job.state) && job.since_progress_ms > limits.transfer_ms)
        return Verdict::kStalled;
      return Verdict::kKeep;
    case JobState::kIdle:
      return job.idle_ms > limits.handle_idle_ms ? Verdict::kIdleExpired : Verdict::kKeep;
    case JobState::kLeased:  // the watchdog judges Observed(job), never this
      return Verdict::kKeep;
    case JobState::kNew:
    case JobState::kQueued:
    case JobState::kStarting:
    case JobState::kArrivalQueued:
    case JobState::kHandingOver:
    case JobState::kHeld:  // waits for a slot, as a queued call does; heartbeats watch it
    case JobState::kDone:
    case JobState::kEnded:
      return Verdict::kKeep;
  }
  return Verdict::kKeep;
}

bool DaemonBeatsForExecutable(const BeatFacts &job, int64_t liveness_ms) {
  const bool executable_silent = job.state == JobState::kReceiving ||
                                 job.state == JobState::kComputing ||
                                 job.state == JobState::kArriving || job.state == JobState::kHeld;
  return executable_silent && job.peer_shut_write && job.client_quiet_ms >= liveness_ms &&
         job.executable_stopped && !job.output_queued;
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

}  // namespace ninf::server
