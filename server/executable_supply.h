// Where a call's executable comes from: a warm one from the pool if one is
// idle, else one started for it (cold: a spawn, through the launch broker
// for launched ones); whether a process may serve again after a call
// (reuse_policy.h); and the pool replenished off the call path
// (warm_policy.h decides when). The job table asks; it does not know how.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "protocol/status.h"
#include "server/job.h"
#include "server/launch_broker.h"
#include "server/launcher.h"
#include "server/registry.h"
#include "server/settings.h"
#include "server/stats.h"
#include "server/warm_pool.h"

namespace ninf::server {

class ExecutableSupply {
 public:
  // `settings`, `registry` and `counters` are the server's and outlive the
  // supply; `slots` bounds the idle executables kept; `reaped` runs when
  // one of the pool's processes is gone (a shutdown may be complete).
  ExecutableSupply(uv_loop_t *loop, const Settings &settings, const Registry &registry, int cores,
                   int slots, Counters *counters, std::function<void()> reaped);
  ~ExecutableSupply();
  ExecutableSupply(const ExecutableSupply &) = delete;
  ExecutableSupply &operator=(const ExecutableSupply &) = delete;

  // How `function`'s executable is started (launcher.h).
  Launch LaunchOf(const std::string &function) const;
  // Opens the launch broker: on first use, or at start with a
  // launch_address (a port that cannot be had fails the start, not a call).
  Status OpenLaunchBroker();
  void CloseBroker();

  // Hands `job` to a warm executable if one takes it (*warm), else to one
  // started for it. An error: no executable took the call (the job is to
  // end with it); the pool keeps and reaps what was started. `stopping`:
  // the server is shutting down (no process is kept for another call).
  Status Handoff(Job &job, bool stopping, bool *warm);
  // After a hand-off: start replacement warm executables now, later or not.
  // `threads_held`: admission's, the call's own included.
  void WarmAfter(const Job &job, bool warm, int threads_held, const std::string &function,
                 const std::string &executable);
  // warm_at_start: starts warm_executables idle executables of each of
  // `functions` now, before its first call, and arms its warming. Returns
  // the names the registry does not serve (nothing started for them).
  std::vector<std::string> WarmAtStart(const std::vector<std::string> &functions);
  // CTL_RELEASED: `process`, done with `job`'s call, goes back to the pool
  // if it may serve again (true), or is retired.
  bool TakeBack(const Job &job, Process *process, bool stopping);

  WarmPool &pool() { return warm_; }
  const WarmPool &pool() const { return warm_; }

 private:
  bool HandoffWarm(Job &job, bool stopping);
  Status HandoffCold(Job &job, bool stopping);
  // Process::Spawn with `function`'s launch, and the launch broker opened
  // on first use; as `run_as`'s account when it is set.
  Status Spawn(const std::string &function, const std::string &executable, ProcessOwner *owner,
               Process **out, const RunAs &run_as = {});
  // Whether `process` may serve another call after this one of `job`'s
  // (reuse_policy.h MayReuse); `served` counts the calls including this one.
  bool MayReuseAfter(const Job &job, const Process &process, uint64_t served, bool stopping) const;

  uv_loop_t *loop_;
  const Settings &settings_;
  const Registry &registry_;
  int cores_;
  Counters &counters_;
  WarmPool warm_;
  std::unique_ptr<LaunchBroker> broker_;  // launched executables' connect-back; on first use
};

}  // namespace ninf::server
