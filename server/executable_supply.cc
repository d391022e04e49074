// ExecutableSupply (executable_supply.h): warm or cold hand-offs, the
// launch broker, reuse, replenishing the warm pool.
#include "server/executable_supply.h"

#include <unistd.h>

#include "daemon/log.h"
#include "server/durations.h"
#include "server/reuse_policy.h"
#include "server/warm_policy.h"

namespace ninf::server {

ExecutableSupply::ExecutableSupply(uv_loop_t *loop, const Settings &settings,
                                   const Registry &registry, int cores, int slots,
                                   Counters *counters, std::function<void()> reaped)
    : loop_(loop),
      settings_(settings),
      registry_(registry),
      cores_(cores),
      counters_(*counters),
      warm_(loop, static_cast<int>(settings.warm_executables), slots,
            {.spawn = [this](const std::string &function, const std::string &executable,
                             ProcessOwner *owner,
                             Process **out) { return Spawn(function, executable, owner, out); },
             .spawned = [this](const Process &) { ++counters_.executables_started; },
             .reaped = std::move(reaped)}) {}

ExecutableSupply::~ExecutableSupply() = default;

Status ExecutableSupply::Handoff(Job &job, bool stopping, bool *warm) {
  *warm = HandoffWarm(job, stopping);
  if (*warm) {
    ++counters_.warm_hits;
    return Status::Ok();
  }
  ++counters_.warm_misses;
  return HandoffCold(job, stopping);
}

bool ExecutableSupply::TakeBack(const Job &job, Process *process, bool stopping) {
  if (MayReuseAfter(job, *process, process->calls_served(), stopping))
    return warm_.Return(process);  // which retires it when it cannot keep it
  warm_.Discard(process);
  return false;
}

std::vector<std::string> ExecutableSupply::WarmAtStart(const std::vector<std::string> &functions) {
  std::vector<std::string> unknown;
  for (const std::string &name : functions) {
    const FunctionEntry *entry = registry_.Find(name);
    if (!entry) {
      unknown.push_back(name);
      continue;
    }
    warm_.Replenish(name, entry->executable);
  }
  return unknown;
}

void ExecutableSupply::WarmAfter(const Job &job, bool warm, int threads_held,
                                 const std::string &function, const std::string &executable) {
  // A process that came back after an earlier call will come back after
  // this one too; one that never did may be an executable that exits.
  const bool comes_back = job.call().reusable && job.process() && job.process()->calls_served() > 0;
  // A call whose arguments were all in took its slot at the hand-off rather
  // than a moment later, when it asks (admission after arrival): the pool
  // replenishes as it would have for it, before the call's threads count.
  const int held =
      threads_held - (job.notes.plan.path == SlotPath::kFreeSlotAtHandoff ? job.call().cores : 0);
  switch (WarmAfterHandoff(warm, comes_back, warm_.idle(function), held, cores_)) {
    case WarmAction::kNothing:
      break;
    case WarmAction::kReplenishNow:
      warm_.Replenish(function, executable);
      break;
    case WarmAction::kArm:
      warm_.Arm(function, executable);
      break;
  }
}

bool ExecutableSupply::HandoffWarm(Job &job, bool stopping) {
  // The pool's executables run as ninfd: a call whose user runs as its own
  // account starts its own (cold).
  if (job.params().run_as.set()) return false;
  const auto max_call_bytes = static_cast<uint64_t>(settings_.max_call_bytes);
  // A warm executable that died a moment ago (its exit not yet seen) fails
  // the hand-off; then the next one is tried.
  while (Process *p = warm_.Take(job.params().function, job.params().executable)) {
    const bool reused = p->calls_served() > 0;
    if (job.Handoff(p, max_call_bytes, MayReuseAfter(job, *p, p->calls_served() + 1, stopping))) {
      if (reused) ++counters_.executables_reused;
      return true;
    }
    warm_.Discard(p);
  }
  return false;
}

bool ExecutableSupply::MayReuseAfter(const Job &job, const Process &process, uint64_t served,
                                     bool stopping) const {
  // A process running as a user's account never serves another call (nor
  // goes back to the pool, where anyone's calls take it).
  if (job.params().run_as.set()) return false;
  ReuseFacts f;
  f.persistent = job.params().persistent;
  f.function_allows = job.params().reuse;
  f.max_calls = job.params().limits.max_calls;
  f.served = served;
  f.max_age_ms = settings_.executable_max_seconds * 1000;
  f.age_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - process.spawned_at())
          .count();
  f.stopping = stopping;
  return MayReuse(f);
}

Launch ExecutableSupply::LaunchOf(const std::string &function) const {
  const FunctionEntry *entry = registry_.Find(function);
  return entry ? LaunchFor(entry->iface, settings_, cores_, ::geteuid() == 0) : Launch();
}

Status ExecutableSupply::OpenLaunchBroker() {
  if (broker_) return Status::Ok();
  auto broker = std::make_unique<LaunchBroker>(loop_);
  HostPort tcp;
  Status st = settings_.launch_address.empty() ? Status::Ok()
                                               : ParseLaunchAddress(settings_.launch_address, &tcp);
  if (st.ok()) st = broker->Start(tcp);
  if (!st.ok()) {
    broker->Close();
    return st;
  }
  broker_ = std::move(broker);
  return Status::Ok();
}

void ExecutableSupply::CloseBroker() {
  if (broker_) broker_->Close();
}

Status ExecutableSupply::Spawn(const std::string &function, const std::string &executable,
                               ProcessOwner *owner, Process **out, const RunAs &run_as) {
  Launch launch = LaunchOf(function);
  launch.run_as = run_as;
  if (!launch.direct()) NINF_RETURN_IF_ERROR(OpenLaunchBroker());  // on first use
  return Process::Spawn(loop_, function, executable, launch, broker_.get(), owner, out);
}

Status ExecutableSupply::HandoffCold(Job &job, bool stopping) {
  Process *p = nullptr;
  // Owned by the pool until the job adopts it, so that a failed hand-off
  // leaves the pool to reap it.
  NINF_RETURN_IF_ERROR(
      Spawn(job.params().function, job.params().executable, &warm_, &p, job.params().run_as));
  ++counters_.executables_started;
  job.set_cold_start();
  if (!job.Handoff(p, static_cast<uint64_t>(settings_.max_call_bytes),
                   MayReuseAfter(job, *p, 1, stopping))) {
    warm_.Discard(p);
    return Status(NINF_ERR_EXECUTABLE, "the executable for '" + job.params().function +
                                           "' exited before it took the call");
  }
  return Status::Ok();
}

}  // namespace ninf::server
