// The watchdog: twice a second every job is held to its deadlines and the
// idle function-handle executables to their budgets. The decisions are the
// policy's (watch_policy.h: Watch, IdleHandlesToStop); this class gathers
// their facts and carries the verdicts out on the jobs themselves (Kill, a
// heartbeat in a stopped executable's place). Ending a job is the job
// table's: what should end is returned to it.
//
// Transfer progress is read from the kernel, not from the executable: ninfd
// keeps its own descriptor of the client socket, and TCP_INFO tells how many
// bytes the socket has received (arguments) and had acknowledged (result).
// So a stopped executable, a client that stopped sending or reading, or
// data stuck in a socket after the client died all show as no progress,
// whatever the executable itself could still report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/job.h"
#include "server/settings.h"

namespace ninf::server {

class JobWatch {
 public:
  // `settings` are the server's (live: a reload changes the deadlines).
  explicit JobWatch(const Settings &settings) : settings_(settings) {}

  // Holds every job of `jobs` to its deadlines at `now`: kills what has
  // earned it. Returns the calls whose arguments did not begin within
  // request_timeout_seconds of their CALL, for the job table to end.
  std::vector<uint64_t> Run(const JobTable &jobs, Clock::time_point now) const;
  // Stops idle handles' executables beyond max_idle_handles or
  // idle_handle_memory (IdleHandlesToStop picks which).
  void StopIdleHandlesOverBudget(const JobTable &jobs, Clock::time_point now) const;

 private:
  struct Kill {
    uint64_t job;
    KillReason reason;
    std::string detail;
  };
  // The kill `job` has earned, if any; catches up on its control first.
  bool Judge(Job &job, Clock::time_point now, Kill *kill) const;
  // DaemonBeatsForExecutable (watch_policy.h): writes the heartbeat a
  // stopped executable cannot write to a client that shut its side.
  void BeatForStoppedExecutable(Job &job, Clock::time_point now) const;

  const Settings &settings_;
};

}  // namespace ninf::server
