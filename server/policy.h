// ninfd's policy: how many calls run at once, with how many threads and who
// waits (admission.h, the scheduler), when a warm executable is
// started, when dying warm executables are given up (RestartPolicy), which
// job states hold a slot, and what the end of a job means for its client and
// the statistics. Pure logic on plain values, without sockets, processes or
// libuv, so that every decision is unit-tested on its own
// (tests/server/policy_test.cc, admission_test.cc, restart_policy_test.cc).
// Server only wires these decisions to the objects they concern.

#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/status.h"
#include "server/admission.h"
#include "server/stats.h"

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

// The life of a job (job.h), one state at a time:
//
//   kNew ──> kQueued ──> kStarting ──> kReceiving ──> kComputing ──> kReplying
//     └──────────────────────^              │ CALL_DONE      │             │
//                                           v                v             v
//                                 persistent: kIdle ──ARGS_RECEIVED──> kComputing
//                                 one-shot:   kDone (the executable exits, or
//                                             says CTL_RELEASED when reusable)
//
// and from any state to kEnded, once, when the job is finished (Server::
// FinishJob). Later kinds of jobs (remote redirects, MPI and Slurm launches)
// add their states here.
enum class JobState {
  kNew,        // read from a CALL frame, not yet offered to admission
  kQueued,     // waiting in the admission queue for a slot
  kStarting,   // holds a slot; the hand-off waits for a heartbeat to be written
  kReceiving,  // handed to the executable, which reads the call's arguments
  kComputing,  // CTL_ARGS_RECEIVED: the routine runs
  kReplying,   // CTL_REPLYING: the executable writes the result
  kIdle,       // a persistent executable between calls
  kDone,       // a one-shot executable's call is done; it exits or is released
  kEnded,      // finished: nothing more happens to the job
};

const char *JobStateName(JobState state);

// Whether a job in `state` counts in the admission's running calls. An idle
// persistent executable holds no slot: its next call takes one again.
bool HoldsSlot(JobState state);

// Whether a call is under way: from the hand-off (or a persistent
// executable's CTL_ARGS_RECEIVED) to CTL_CALL_DONE.
bool CallOpen(JobState state);

// Whether a client hang-up in `state` means the client left before its
// result (the call is cancelled and the executable killed). Once the
// executable replies, a hang-up is the client leaving with its result.
bool HangupCancels(JobState state);

// Heartbeats more frequent than this would only load the daemon, the
// executable and the client; a smaller request is raised to it.
inline constexpr uint32_t kMinHeartbeatMs = 10;
// The heartbeat period of a call: what its client asked for, but never
// slower than the server's liveness period, because heartbeats are also how
// ninfd learns that a client is gone (the beat to a closed socket fails).
// 0 asks for none: the call gets the liveness period.
uint32_t HeartbeatPeriodMs(uint32_t requested_ms, uint32_t liveness_ms);

// The deadlines the watchdog (Server, twice a second) holds a job to.
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
};
enum class Verdict {
  kKeep,
  kStalled,      // kill: the transfer made no progress for transfer_ms
  kWallLimit,    // kill: the call ran out of wall-clock time
  kIdleExpired,  // stop the idle persistent executable
};
Verdict Watch(const WatchFacts &job, const WatchLimits &limits);

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

// A new connection arrives from an address that has used up its share (or
// the server is full). Which open connection it replaces: the oldest that
// has not yet completed a single request (a slow or stuck sender; a client
// that works sends its request at once), if any.
struct ConnectionFacts {
  uint64_t id = 0;
  bool reading = false;     // still in the request phase (no call parked)
  uint64_t requests = 0;    // complete requests read
  uint64_t opened_seq = 0;  // order of acceptance
};
std::optional<uint64_t> ConnectionToReplace(const std::vector<ConnectionFacts> &candidates);

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

// Reused executables: after a one-shot call the executable goes back to the
// pool instead of exiting, until it has served max_calls calls or lived
// max_age (php-fpm's pm.max_requests, gunicorn's max_requests: a routine
// that leaks, or fragments its heap, is renewed now and then). A function
// whose routine keeps global state opts out (IDL `Reuse "no"`, or
// executable_max_calls = 1 in its [limits.NAME] table).
struct ReuseFacts {
  bool persistent = false;      // handles keep their executable for their own calls
  bool function_allows = true;  // the IDL does not say Reuse "no"
  int64_t max_calls = 0;        // per process; 1: one call each (no reuse)
  uint64_t served = 0;          // calls the process has served, the current one included
  int64_t max_age_ms = 0;       // 0: no limit
  int64_t age_ms = 0;           // since the process started
  bool stopping = false;        // the server is shutting down
};
// Whether the process may serve one more call after the ones it served.
bool MayReuse(const ReuseFacts &f);

// Why ninfd killed an executable, for the client's error and the stats.
enum class KillReason {
  kNone,
  kClientGone,   // the client hung up, or a heartbeat to it failed
  kShutdown,     // SIGTERM's grace period is over
  kStalled,      // the transfer made no progress (Verdict::kStalled)
  kWallLimit,    // the call's wall-clock budget is spent
  kIdleExpired,  // an idle persistent executable was stopped (idle time or budget)
};

// Why a job is being finished.
enum class EndReason {
  kExited,       // the executable has exited; the job's state says how far it got
  kSpawnFailed,  // it could not be started
  kQueueFull,    // refused: no room in the queue
  kRefused,      // refused: shutting down
  kHangup,       // the client left before its call was handed off
  kNoArguments,  // CALL came, its arguments did not start in time (`why` says so)
  kReleased,     // a reusable executable finished the call and went back to the pool
};

// What a job's end means, from plain facts about it.
struct JobFacts {
  JobState state = JobState::kNew;  // before the end
  bool persistent = false;
  KillReason kill_reason = KillReason::kNone;
  std::string function;
  std::string exit_description;   // "signal 9", "exit status 3"
  int term_signal = 0;            // the signal that ended the executable, if any
  std::string kill_detail;        // ninfd's words for why it killed it
  int64_t cpu_limit_seconds = 0;  // the call's CPU budget (SIGXCPU means it was spent)
  std::size_t queued = 0;         // calls waiting in the queue now
};
struct Ending {
  bool counted = true;  // a call was under way (or refused) and is counted now
  CallOutcome outcome = CallOutcome::kFailed;
  Status tell;  // FRAME_ERROR for the client; ok: close silently
};
Ending DescribeEnding(const JobFacts &job, EndReason reason, const Status &why);

}  // namespace ninf::server
