// What the end of a job means for its client and the statistics: why
// ninfd killed an executable, why a job is being finished, and the one
// decision that turns these facts into an outcome and an error for the
// client (DescribeEnding). Pure logic on plain values, unit-tested without
// sockets (tests/server/policy_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "protocol/status.h"
#include "server/job_state.h"
#include "server/stats.h"

namespace ninf::server {

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
  kOverQuota,    // refused: its user's quota (`why` says which)
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
