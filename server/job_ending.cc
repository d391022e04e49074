#include "server/job_ending.h"

#include <csignal>

namespace ninf::server {

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
    case EndReason::kOverQuota:
      e.outcome = CallOutcome::kRejected;
      e.tell = why;
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
  // A handle's idle executable stopped for the idle budget just as its next
  // call came: the routine had not begun (ninfd stops only executables it
  // saw idle, and a killed one begins nothing), so the client may send the
  // call again to a new executable, which a handle does on NINF_ERR_EXPIRED.
  if (job.persistent && job.kill_reason == KillReason::kIdleExpired &&
      job.state != JobState::kComputing && !WritingResult(job.state)) {
    e.outcome = CallOutcome::kCancelled;
    e.tell = Status(NINF_ERR_EXPIRED, job.kill_detail);
    return e;
  }
  e.outcome = CallOutcome::kFailed;
  // Once the executable began its reply nothing can be said: a frame cannot
  // be injected into the middle of another.
  if (WritingResult(job.state)) return e;
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
