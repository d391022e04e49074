// Server: the call path. FRAME_CALL -> Job (started or queued) -> control
// events -> FinishJob, the one place every job ends.
#include <algorithm>
#include <cmath>

#include "daemon/log.h"
#include "ninf.pb.h"
#include "server/server.h"

namespace ninf::server {
namespace {

double SecondsBetween(Clock::time_point from, Clock::time_point to) {
  if (from == Clock::time_point() || to < from) return 0;
  return std::chrono::duration<double>(to - from).count();
}

// Fixed-point text for durations in log lines.
std::string Sec(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", s);
  return buf;
}

}  // namespace

void Server::HandleCall(daemon::Connection &conn, std::string_view body) {
  wire::CallRequest req;
  if (!req.ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    Status st(NINF_ERR_PROTOCOL, "malformed CALL message");
    OnProtocolError(conn, st);
    conn.Fail(st);
    return;
  }
  const FunctionEntry *entry = registry_.Find(req.name());
  if (!entry) {
    daemon::RateLimitedInfo("call_unknown",
                            "event=call_unknown conn={} peer={} call={} function={}", conn.id(),
                            conn.peer(), req.call_id(), daemon::Quoted(req.name()));
    conn.Fail(Status(NINF_ERR_FUNCTION_NOT_FOUND,
                     "no function " + daemon::Quoted(req.name()) + " on this server"));
    return;
  }
  CallParams params;
  params.call_id = req.call_id();
  params.function = req.name();
  params.executable = entry->executable;
  params.persistent = req.persistent();
  params.reuse = !entry->iface.no_reuse();
  params.heartbeat_ms = HeartbeatPeriodMs(req.heartbeat_ms(),
                                          static_cast<uint32_t>(settings_.liveness_seconds * 1000));
  params.limits = settings_.LimitsOf(req.name());
  params.redirect_wait_ms = static_cast<uint32_t>(settings_.request_timeout_seconds * 1000);
  params.work_flops = std::isfinite(req.work_flops()) ? std::max(0.0, req.work_flops()) : 0;
  params.owner = OwnerOf(conn);
  const bool redirected = LaunchOf(req.name()).over_tcp;
  if (req.submit() && redirected) {
    conn.Fail(Status(NINF_ERR_NOT_SUPPORTED,
                     "'" + req.name() +
                         "' runs on another host than ninfd (launch_address): it cannot serve "
                         "a two-phase call"));
    return;
  }
  if (req.submit()) {
    if (Status st = ReserveResult(req.keep_bytes(), &params); !st.ok()) {
      spdlog::info("event=submit_refused conn={} peer={} call={} function={} error={}", conn.id(),
                   conn.peer(), req.call_id(), daemon::Quoted(req.name()),
                   daemon::Quoted(st.message()));
      conn.Fail(st);
      return;
    }
  }
  ++counters_.calls_received;
  auto owned = std::make_unique<Job>(this, next_job_id_++, std::move(params), &conn);
  Job *job = owned.get();
  conn.set_data(job);
  jobs_.emplace(job->id(), std::move(owned));
  if (stopping_) {
    FinishJob(*job, EndReason::kRefused);
    return;
  }
  // A redirected client sends its arguments to the executable, not here.
  if (!redirected && !conn.InputWaiting()) {
    spdlog::debug("event=call_awaiting_arguments job={} call={} function={} peer={}", job->id(),
                  job->call_id(), job->function(), conn.peer());
    conn.WatchInput(true);
    return;
  }
  OfferJob(*job);
}

void Server::OnInputArrived(daemon::Connection &conn) {
  Job *job = JobOf(conn);
  if (!job || !AwaitsArguments(job->state())) return;
  if (!conn.InputWaiting()) {
    // Readable without bytes: the client closed its side. The arguments can
    // no longer come.
    FinishJob(*job, EndReason::kNoArguments,
              Status(NINF_ERR_PROTOCOL,
                     "the client closed its side of the connection before the call's arguments"));
    return;
  }
  OfferJob(*job);
}

double Server::SchedulerNow() const {
  return std::chrono::duration<double>(Clock::now() - started_at_).count();
}

CallDemand Server::DemandOf(const Job &job) const {
  CallDemand d;
  d.id = job.id();
  // The client's CalcOrder over the function's measured speed; nothing
  // known yet (or a persistent executable's next call, whose size only its
  // executable sees) counts as instant.
  auto it = counters_.functions.find(job.function());
  if (it != counters_.functions.end() && it->second.flops_per_second > 0)
    d.predicted_seconds = job.predicted_work() / it->second.flops_per_second;
  if (it != counters_.functions.end() && it->second.single_threaded) d.max_threads = 1;
  d.ranks = CoresHeld(LaunchOf(job.function()), cores_);
  return d;
}

void Server::AdmitJob(Job &job, int threads) {
  job.Admit(threads);
  counters_.RecordWait(job.function(), job.QueueSeconds());
}

double Server::OpenBusyCoreSeconds() const {
  const Clock::time_point now = Clock::now();
  double sum = 0;
  for (const auto &entry : jobs_) {
    const Job &job = *entry.second;
    if (RoutineRuns(job.state()) && job.computing_since() <= now)
      sum += std::chrono::duration<double>(now - job.computing_since()).count() * job.threads();
  }
  return sum;
}

void Server::OfferJob(Job &job) {
  daemon::Connection &conn = *job.conn();
  int threads = 0;
  switch (admission_.Offer(DemandOf(job), SchedulerNow(), &threads)) {
    case Admission::Decision::kRun:
      AdmitJob(job, threads);
      StartJob(job);
      break;
    case Admission::Decision::kQueue:
      job.Queue();
      conn.WatchHangup(true);
      // ninfd owns the socket until the hand-off, so it proves the call
      // alive itself while it waits (and learns so that the client is gone).
      conn.StartHeartbeats(job.heartbeat_ms());
      spdlog::info("event=call_queued job={} call={} function={} peer={} queued={}", job.id(),
                   job.call_id(), job.function(), conn.peer(), admission_.queued());
      break;
    case Admission::Decision::kReject:
      FinishJob(job, EndReason::kQueueFull);
      break;
  }
  PublishLoad();
}

void Server::StartJob(Job &job) {
  if (!job.conn()) {  // the client vanished before its call could start
    FinishJob(job, EndReason::kHangup);
    return;
  }
  // A heartbeat still on its way must be out before the executable shares
  // the socket, or its frames would interleave with ours.
  job.conn()->StopHeartbeats();
  if (job.conn()->output_pending()) {  // OnOutputFlushed starts it again
    job.conn()->NotifyWhenFlushed();
    return;
  }
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
      "event=call_start job={} call={} function={} peer={} pid={} threads={} "
      "persistent={} warm={} heartbeat_ms={} queue_seconds={}",
      job.id(), job.call_id(), job.function(), job.conn() ? job.conn()->peer() : "-", job.pid(),
      job.threads(), job.persistent(), warm, job.heartbeat_ms(),
      Sec(SecondsBetween(job.arrived(), job.admitted())));
  // A process that came back after an earlier call will come back after
  // this one too; one that never did may be an executable that exits.
  const bool comes_back = job.reusable() && job.process_served_before();
  switch (
      WarmAfterHandoff(warm, comes_back, warm_.idle(function), admission_.threads_held(), cores_)) {
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

bool Server::HandoffWarm(Job &job) {
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

bool Server::MayReuseAfter(const Job &job, const Process &process, uint64_t served) const {
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

void Server::OnReleased(Job &job) {
  Process *p = job.ReleaseProcess();
  p->CountCall();
  // Back in the pool before the job ends: ending it frees its slot, and a
  // call of the same function waiting for one takes this process at once.
  const int pid = p->pid();
  const uint64_t calls = p->calls_served();
  bool kept = false;
  if (MayReuseAfter(job, *p, calls))
    kept = warm_.Return(p);  // which retires it when it cannot keep it
  else
    warm_.Discard(p);
  spdlog::debug("event=executable_{} job={} function={} pid={} calls={}",
                kept ? "released" : "retired", job.id(), job.function(), pid, calls);
  FinishJob(job, EndReason::kReleased);
}

Launch Server::LaunchOf(const std::string &function) const {
  const FunctionEntry *entry = registry_.Find(function);
  return entry ? LaunchFor(entry->iface, settings_, cores_, ::geteuid() == 0) : Launch();
}

wire::FunctionInterface Server::ServedInterface(const FunctionEntry &entry) const {
  wire::FunctionInterface iface = entry.iface;
  iface.set_redirect(LaunchFor(entry.iface, settings_, cores_, ::geteuid() == 0).over_tcp);
  return iface;
}

Status Server::OpenLaunchBroker() {
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

Status Server::SpawnProcess(const std::string &function, const std::string &executable,
                            ProcessOwner *owner, Process **out) {
  const Launch launch = LaunchOf(function);
  if (!launch.direct()) NINF_RETURN_IF_ERROR(OpenLaunchBroker());  // on first use
  return Process::Spawn(loop_, function, executable, launch, broker_.get(), owner, out);
}

bool Server::HandoffCold(Job &job) {
  Process *p = nullptr;
  // Owned by the pool until the job adopts it, so that a failed hand-off
  // leaves the pool to reap it.
  Status st = SpawnProcess(job.function(), job.executable(), &warm_, &p);
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

void Server::OnOutputFlushed(daemon::Connection &conn) {
  if (JobOf(conn) && AwaitsHandoff(JobOf(conn)->state())) StartJob(*JobOf(conn));
}

void Server::AdmitQueued() {
  // Not re-entered: a start that fails ends its job, whose FinishJob lands
  // here again; the outer loop then simply continues.
  if (admitting_) return;
  admitting_ = true;
  while (std::optional<Grant> grant = admission_.Next(SchedulerNow())) {
    Job &job = *jobs_.at(grant->id);
    const bool resumed = job.started();  // a persistent executable's next call
    AdmitJob(job, grant->threads);
    // The hang-up watch stays on: a client leaving before the hand-off
    // (while a last heartbeat is written) cancels its call.
    if (!resumed) StartJob(job);
  }
  admitting_ = false;
  PublishLoad();
}

void Server::OnArgsReceived(Job &job, bool resumed) {
  spdlog::debug("event=args_received job={} call={} function={} resumed={}", job.id(),
                job.call_id(), job.function(), resumed);
  // The client shut its write side while the arguments were read (which is
  // normal for a client that sent everything): now the routine runs, a
  // heartbeat can tell whether it is still there to read the result.
  if (job.two_phase() && job.conn()) {
    // The executable has sent the ticket: the client may leave, and its
    // leaving cancels nothing. The connection is finished gently.
    daemon::Connection *conn = job.conn();
    conn->set_data(nullptr);
    job.detach_conn();
    conn->Finish();
  }
  if (job.conn() && job.conn()->peer_shut_write()) job.Probe();
  PublishLoad();  // the call's size is known now
}

void Server::OnWantSlot(Job &job) {
  // A persistent executable's next call waits for a slot like any other.
  if (stopping_) {
    job.RefuseSlot(Status(NINF_ERR_SHUTTING_DOWN, "the server is shutting down"));
    return;
  }
  int threads = 0;
  switch (admission_.Offer(DemandOf(job), SchedulerNow(), &threads)) {
    case Admission::Decision::kRun:
      AdmitJob(job, threads);
      break;
    case Admission::Decision::kQueue:
      spdlog::info("event=call_queued job={} call={} function={} persistent=1 queued={}", job.id(),
                   job.call_id(), job.function(), admission_.queued());
      break;  // AdmitQueued grants it
    case Admission::Decision::kReject:
      ++counters_.rejected;
      job.RefuseSlot(Status(NINF_ERR_SERVER, "server busy"));
      break;
  }
}

void Server::OnClientGone(Job &job) {
  spdlog::info("event=client_gone job={} call={} function={} pid={} reason=heartbeat_failed",
               job.id(), job.call_id(), job.function(), job.pid());
  job.Kill(KillReason::kClientGone);
}

void Server::OnPeerShutWrite(daemon::Connection &conn) {
  Job *job = JobOf(conn);
  if (!job) return;
  // A half-close is no cancel: the client may still read its result. Ask
  // the side that writes to the socket now to send a heartbeat; a closed
  // peer answers it with a reset, which OnHangup then sees.
  job->CatchUpControl();
  if (JobOf(conn) != job) return;  // a two-phase call let its client go
  spdlog::debug("event=peer_shut_write job={} call={} state={}", job->id(), job->call_id(),
                JobStateName(job->state()));
  switch (HeartbeatWriterIn(job->state())) {
    case HeartbeatWriter::kDaemon:
      conn.Probe();
      break;
    case HeartbeatWriter::kExecutable:
      job->Probe();
      break;
    case HeartbeatWriter::kNone:
      break;
  }
}

void Server::OnCallDone(Job &job, const ControlMsg &msg) {
  CallOutcome outcome = msg.error_code == NINF_OK ? CallOutcome::kCompleted : CallOutcome::kFailed;
  double busy = msg.recv_seconds + msg.compute_seconds + msg.send_seconds;
  counters_.RecordCall(job.function(), outcome, std::isfinite(busy) ? busy : 0, msg.bytes_in,
                       msg.bytes_out);
  counters_.functions[job.function()].single_threaded = msg.threads == 1;
  if (outcome == CallOutcome::kCompleted) {
    counters_.RecordPhases(job.function(), msg.recv_seconds + msg.send_seconds, msg.compute_seconds,
                           job.threads());
    counters_.RecordSpeed(job.function(), msg.work_flops, msg.compute_seconds);
    counters_.RecordStartup(job.StartupSeconds(msg.recv_seconds));
  }
  double queue = job.calls_done() == 1 ? SecondsBetween(job.arrived(), job.admitted()) : 0;
  spdlog::info(
      "event=call_done job={} call={} function={} peer={} outcome={} error={} "
      "bytes_in={} bytes_out={} queue_seconds={} recv_seconds={} compute_seconds={} "
      "send_seconds={} wall_seconds={}",
      job.id(), msg.call_id, job.function(), job.conn() ? job.conn()->peer() : "-",
      CallOutcomeName(outcome), msg.error_code, msg.bytes_in, msg.bytes_out, Sec(queue),
      Sec(msg.recv_seconds), Sec(msg.compute_seconds), Sec(msg.send_seconds),
      Sec(SecondsBetween(job.call_started(), Clock::now())));
  if (IdleBetweenCalls(job.state())) {
    // Idle between calls, a persistent executable holds no slot.
    admission_.Release(job.threads());
    AdmitQueued();
  }
  PublishLoad();
}

void Server::OnExit(Job &job) { FinishJob(job, EndReason::kExited); }

void Server::OnHangup(daemon::Connection &conn) {
  Job *job = JobOf(conn);
  if (!job) return;
  if (ClientLossEndsCall(job->state())) {
    FinishJob(*job, EndReason::kHangup);
    return;
  }
  // The hangup and the executable's last control messages may arrive in
  // the same loop turn; a client that leaves with its result is no cancel.
  job->CatchUpControl();
  if (JobOf(conn) != job) return;  // a two-phase call let its client go
  if (HangupCancels(job->state())) {
    spdlog::info("event=client_gone job={} call={} function={} peer={} pid={}", job->id(),
                 job->call_id(), job->function(), conn.peer(), job->pid());
    job->Kill(KillReason::kClientGone);
  }
}

void Server::FinishJob(Job &job, EndReason reason, const Status &why) {
  daemon::Connection *conn = job.conn();
  const Ending ending = DescribeEnding(job.Facts(admission_.queued()), reason, why);
  const JobState before = job.state();
  if (InQueue(before)) admission_.Withdraw(job.id());
  if (HoldsSlot(before)) admission_.Release(job.threads());
  job.End();

  const std::string &name = job.function();
  if (ending.counted) counters_.RecordCall(name, ending.outcome, 0, 0, 0);
  std::string peer = conn ? conn->peer() : "-";
  if (ending.counted)
    spdlog::warn(
        "event=call_end job={} call={} function={} peer={} outcome={} exit={} "
        "error={} wall_seconds={}",
        job.id(), job.call_id(), name, peer, CallOutcomeName(ending.outcome),
        daemon::Quoted(job.exited() ? job.ExitDescription() : "-"),
        daemon::Quoted(ending.tell.message()), Sec(SecondsBetween(job.arrived(), Clock::now())));
  else if (job.exited())
    spdlog::log(job.exit_status() == 0 && job.term_signal() == 0 ? spdlog::level::debug
                                                                 : spdlog::level::warn,
                "event=job_exit job={} call={} function={} pid={} exit={} calls={}", job.id(),
                job.call_id(), name, job.pid(), daemon::Quoted(job.ExitDescription()),
                job.calls_done());

  SettleResult(job, ending.tell);
  if (conn) {
    conn->set_data(nullptr);
    job.detach_conn();
    // Gently in both cases: a close with unread input would reset the
    // connection and could destroy what the client has not read yet.
    if (!ending.tell.ok())
      conn->Fail(ending.tell);
    else
      conn->Finish();
  }
  if (job.started()) warm_.Refill(name);  // see StartJob
  jobs_.erase(job.id());                  // frees the job: not to be touched below
  AdmitQueued();
  MaybeStopped();
}

}  // namespace ninf::server
