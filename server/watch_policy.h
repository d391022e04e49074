// The watchdog's policy (job_watch.cc) and the liveness of calls: the
// heartbeat period a call gets, the deadline each job state is held to, and
// which idle function-handle executables stop beyond their budgets. Pure
// logic on plain values, unit-tested without sockets
// (tests/server/policy_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "server/job_state.h"

namespace ninf::server {

// Heartbeats more frequent than this would only load the daemon, the
// executable and the client; a smaller request is raised to it.
inline constexpr uint32_t kMinHeartbeatMs = 10;
// The heartbeat period of a call: what its client asked for, but never
// slower than the server's liveness period, because heartbeats are also how
// ninfd learns that a client is gone (the beat to a closed socket fails).
// 0 asks for none: the call gets the liveness period.
uint32_t HeartbeatPeriodMs(uint32_t requested_ms, uint32_t liveness_ms);

// The deadlines the watchdog (Scheduler, twice a second) holds a job to.
struct WatchLimits {
  int64_t transfer_ms = 0;     // arguments or result without progress
  int64_t wall_ms = 0;         // one call, hand-off to result (0: none)
  int64_t handle_idle_ms = 0;  // a persistent executable between calls
};
// What the watchdog knows of one job.
struct WatchFacts {
  JobState state = JobState::kNew;
  int64_t in_call_ms = 0;         // since the call was handed over (or granted its slot)
  int64_t since_progress_ms = 0;  // since the socket last moved data in this state
  int64_t idle_ms = 0;            // since a persistent executable became idle
  bool awaits_room = false;       // kArriving: a handle's call waiting for arrival room
};
enum class Verdict {
  kKeep,
  kStalled,      // kill: the transfer made no progress for transfer_ms
  kWallLimit,    // kill: the call ran out of wall-clock time
  kIdleExpired,  // stop the idle persistent executable
};
Verdict Watch(const WatchFacts &job, const WatchLimits &limits);

// Once the executable has the socket, only its writes learn whether a
// client that shut its write side is gone (a reset) or only half-closed:
// ninfd asks it for a heartbeat then (CTL_PROBE, while the routine runs).
// A stopped executable (SIGSTOP, a debugger) writes nothing, and its call
// would hold its slot until the transfer timeout, or forever while it
// computes. So when the client has been quiet for the liveness period and
// the executable, reading arguments or computing, is stopped with nothing
// queued in the socket (a stopped process is inside no send(), and in
// these states it writes nothing but whole heartbeats, so the stream is at
// a frame boundary), ninfd writes the beat itself: a gone client's reset
// ends the call, a half-closed one reads one more heartbeat.
struct BeatFacts {
  JobState state = JobState::kNew;
  bool peer_shut_write = false;
  int64_t client_quiet_ms = -1;  // since the client shut its side, or the last beat (-1: not)
  bool executable_stopped = false;
  bool output_queued = false;  // bytes written to the socket but not yet sent
};
bool DaemonBeatsForExecutable(const BeatFacts &job, int64_t liveness_ms);

// Idle persistent executables beyond the budgets: which to stop so that at
// most `max_count` stay and their resident memory is at most `max_bytes`.
// The longest idle go first (the least likely to be called again soon).
struct IdleHandle {
  uint64_t job = 0;
  int64_t idle_ms = 0;
  uint64_t rss_bytes = 0;
};
std::vector<uint64_t> IdleHandlesToStop(std::vector<IdleHandle> idle, std::size_t max_count,
                                        uint64_t max_bytes);

}  // namespace ninf::server
