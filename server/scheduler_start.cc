// Scheduler: starting a call. An admitted call is handed to a warm
// executable if one is idle, else to one started for it (cold); then the
// warm pool is replenished off the call path (warm_policy.h decides when).
#include <unistd.h>

#include "daemon/log.h"
#include "server/durations.h"
#include "server/reuse_policy.h"
#include "server/scheduler.h"
#include "server/warm_policy.h"

namespace ninf::server {

void Scheduler::StartJob(Job &job) {
  if (!job.conn()) {  // the client vanished before its call could start
    FinishJob(job, EndReason::kHangup);
    return;
  }
  // A heartbeat still on its way must be out before the executable shares
  // the socket, or its frames would interleave with ours.
  job.conn()->StopHeartbeats();
  // Over TLS the client waits for the hand-over key, sent as the last frame
  // of ninfd's session; once it is out, the session is freed and the
  // executable gets the key with the socket (Job::Handoff).
  // (A redirected call is not handed over: its REDIRECT goes inside
  // ninfd's session and the client connects to the executable itself.)
  const bool hand_over_tls = job.conn()->tls_active() && !LaunchOf(job.function()).over_tcp;
  if (hand_over_tls && !job.conn()->handover_sent()) {
    if (Status st = job.conn()->SendHandover(); !st.ok()) {
      FinishJob(job, EndReason::kRefused, st);
      return;
    }
  }
  if (job.conn()->output_pending()) {  // OnOutputFlushed starts it again
    job.conn()->NotifyWhenFlushed();
    return;
  }
  if (hand_over_tls) job.conn()->SealTls();
  // Off the call path, the pool makes sure the next call finds an
  // executable waiting (WarmAfterHandoff decides when). A function's first
  // call arms its warming, whether or not that call could start (the pool's
  // restart policy bounds the attempts).
  const std::string function = job.function(), executable = job.executable();
  const bool warm = HandoffWarm(job);
  if (warm) {
    ++counters_.warm_hits;
  } else {
    ++counters_.warm_misses;
    if (!HandoffCold(job)) {  // the job has ended
      warm_.Replenish(function, executable);
      return;
    }
  }
  spdlog::info(
      "event=call_start job={} call={} function={} user={} peer={} pid={} threads={} "
      "persistent={} warm={} heartbeat_ms={} queue_seconds={}",
      job.id(), job.call_id(), job.function(), ShownUser(job.params().owner),
      job.conn() ? job.conn()->peer() : "-", job.pid(), job.threads(), job.persistent(), warm,
      job.heartbeat_ms(), Sec(SecondsBetween(job.arrived(), job.admitted())));
  WarmAfter(job, warm, function, executable);
}

void Scheduler::WarmAfter(const Job &job, bool warm, const std::string &function,
                          const std::string &executable) {
  // A process that came back after an earlier call will come back after
  // this one too; one that never did may be an executable that exits.
  const bool comes_back = job.reusable() && job.process_served_before();
  // A call whose arguments were all in took its slot at the hand-off rather
  // than a moment later, when it asks (admission after arrival): the pool
  // replenishes as it would have for it, before the call's threads count.
  const int held = admission_.threads_held() -
                   (job.admission_plan().path == SlotPath::kFreeSlotAtHandoff ? job.threads() : 0);
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

bool Scheduler::HandoffWarm(Job &job) {
  // The pool's executables run as ninfd: a call whose user runs as its own
  // account starts its own (cold).
  if (job.params().run_as.set()) return false;
  const auto max_call_bytes = static_cast<uint64_t>(settings_.max_call_bytes);
  // A warm executable that died a moment ago (its exit not yet seen) fails
  // the hand-off; then the next one is tried.
  while (Process *p = warm_.Take(job.function(), job.executable())) {
    const bool reused = p->calls_served() > 0;
    if (job.Handoff(p, max_call_bytes, MayReuseAfter(job, *p, p->calls_served() + 1))) {
      if (reused) ++counters_.executables_reused;
      return true;
    }
    warm_.Discard(p);
  }
  return false;
}

bool Scheduler::MayReuseAfter(const Job &job, const Process &process, uint64_t served) const {
  // A process running as a user's account never serves another call (nor
  // goes back to the pool, where anyone's calls take it).
  if (job.params().run_as.set()) return false;
  ReuseFacts f;
  f.persistent = job.persistent();
  f.function_allows = job.reuse_allowed();
  f.max_calls = job.limits().max_calls;
  f.served = served;
  f.max_age_ms = settings_.executable_max_seconds * 1000;
  f.age_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - process.spawned_at())
          .count();
  f.stopping = stopping_;
  return MayReuse(f);
}

Launch Scheduler::LaunchOf(const std::string &function) const {
  const FunctionEntry *entry = registry_.Find(function);
  return entry ? LaunchFor(entry->iface, settings_, cores_, ::geteuid() == 0) : Launch();
}

Status Scheduler::OpenLaunchBroker() {
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

Status Scheduler::SpawnProcess(const std::string &function, const std::string &executable,
                               ProcessOwner *owner, Process **out, const RunAs &run_as) {
  Launch launch = LaunchOf(function);
  launch.run_as = run_as;
  if (!launch.direct()) NINF_RETURN_IF_ERROR(OpenLaunchBroker());  // on first use
  return Process::Spawn(loop_, function, executable, launch, broker_.get(), owner, out);
}

bool Scheduler::HandoffCold(Job &job) {
  Process *p = nullptr;
  // Owned by the pool until the job adopts it, so that a failed hand-off
  // leaves the pool to reap it.
  Status st = SpawnProcess(job.function(), job.executable(), &warm_, &p, job.params().run_as);
  if (!st.ok()) {
    FinishJob(job, EndReason::kSpawnFailed, st);
    return false;
  }
  ++counters_.executables_started;
  job.set_cold_start();
  if (!job.Handoff(p, static_cast<uint64_t>(settings_.max_call_bytes), MayReuseAfter(job, *p, 1))) {
    warm_.Discard(p);
    FinishJob(job, EndReason::kSpawnFailed,
              Status(NINF_ERR_EXECUTABLE,
                     "the executable for '" + job.function() + "' exited before it took the call"));
    return false;
  }
  return true;
}

}  // namespace ninf::server
