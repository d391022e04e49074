// Scheduler: what the executables (JobEvents) and the clients' connections
// (forwarded by the Server) tell about a call, and what each means for it.
#include <algorithm>
#include <cmath>

#include "daemon/log.h"
#include "server/durations.h"
#include "server/job_state.h"
#include "server/scheduler.h"

namespace ninf::server {
namespace {

// CALL_DONE's statistics and call_done log line.
void RecordCallDone(Counters &counters, const Settings &settings, const Job &job,
                    const ControlMsg &msg) {
  CallOutcome outcome = msg.error_code == NINF_OK ? CallOutcome::kCompleted : CallOutcome::kFailed;
  double busy = msg.recv_seconds + msg.compute_seconds + msg.send_seconds;
  counters.RecordCall(job.params().function, outcome, std::isfinite(busy) ? busy : 0, msg.bytes_in,
                      msg.bytes_out);
  counters.RecordUserCall(UserLabelOf(&counters, settings, job.params().owner), outcome);
  FunctionStats &f = counters.functions[job.params().function];
  f.single_threaded = msg.threads == 1;
  f.peak_rss_bytes = std::max(f.peak_rss_bytes, msg.peak_rss_bytes);
  if (outcome == CallOutcome::kCompleted) {
    counters.RecordPhases(job.params().function, msg.recv_seconds + msg.send_seconds,
                          msg.compute_seconds, job.call().threads);
    counters.RecordSpeed(job.params().function, msg.work_flops, msg.compute_seconds);
    counters.RecordStartup(job.call().StartupSeconds(msg.recv_seconds));
  }
  // The wait for the slot: from the arrival (or, admitted after arrival,
  // from the arguments being in) to the slot.
  double queue = job.call().QueueSeconds();
  spdlog::info(
      "event=call_done job={} call={} function={} user={} peer={} outcome={} error={} "
      "bytes_in={} bytes_out={} queue_seconds={} recv_seconds={} compute_seconds={} "
      "send_seconds={} wall_seconds={} peak_rss_bytes={}",
      job.id(), msg.call_id, job.params().function, ShownUser(job.params().owner),
      job.conn() ? job.conn()->peer() : "-", CallOutcomeName(outcome), msg.error_code, msg.bytes_in,
      msg.bytes_out, Sec(queue), Sec(msg.recv_seconds), Sec(msg.compute_seconds),
      Sec(msg.send_seconds), Sec(SecondsBetween(job.call().call_started, Clock::now())),
      msg.peak_rss_bytes);
}

// A reload may have revoked a handle's user or taken its function: may the
// job's user still call it? (Counted as denied when not.)
Status MayContinue(const UserPolicy &users, Counters &counters, const Settings &settings,
                   const Job &job) {
  Status st =
      users.MayRun(users.OfCall(job.params().owner, job.params().key_id), job.params().function);
  if (!st.ok()) {
    ++counters.denied;
    ++counters.users[UserLabelOf(&counters, settings, job.params().owner)].denied;
  }
  return st;
}

}  // namespace

void Scheduler::OnInputArrived(daemon::Connection &conn) {
  Job *job = JobOf(conn);
  if (!job || !AwaitsArguments(job->state())) return;
  if (conn.PeekInput() != daemon::Connection::Unread::kBytes) {
    // Readable without bytes: the client closed its side. The arguments can
    // no longer come.
    FinishJob(*job, EndReason::kNoArguments,
              Status(NINF_ERR_PROTOCOL,
                     "the client closed its side of the connection before the call's arguments"));
    return;
  }
  OfferJob(*job);
}

void Scheduler::OnOutputFlushed(daemon::Connection &conn) {
  if (JobOf(conn) && AwaitsHandoff(JobOf(conn)->state())) StartJob(*JobOf(conn));
}

void Scheduler::OnPeerShutWrite(daemon::Connection &conn) {
  Job *job = JobOf(conn);
  if (!job) return;
  // A half-close is no cancel: the client may still read its result. Ask
  // the side that writes to the socket now to send a heartbeat; a closed
  // peer answers it with a reset, which OnHangup then sees.
  job->CatchUpControl();
  if (JobOf(conn) != job) return;  // a two-phase call let its client go
  job->set_client_quiet_since(Clock::now());
  spdlog::debug("event=peer_shut_write job={} call={} state={}", job->id(), job->params().call_id,
                JobStateName(Observed(*job)));  // what it is doing
  switch (HeartbeatWriterIn(Observed(*job))) {
    case HeartbeatWriter::kDaemon:
      conn.BeatNow();
      break;
    case HeartbeatWriter::kExecutable:
      Probe(*job);
      break;
    case HeartbeatWriter::kNone:
      break;
  }
}

void Scheduler::OnHangup(daemon::Connection &conn) {
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
  // A handle that keeps its slot may be in a call ninfd was not told of.
  if (HangupCancels(Observed(*job))) {
    spdlog::info("event=client_gone job={} call={} function={} user={} peer={} pid={}", job->id(),
                 job->params().call_id, job->params().function, ShownUser(job->params().owner),
                 conn.peer(), job->pid());
    job->Kill(KillReason::kClientGone);
  }
}

void Scheduler::OnConnectionClosed(Job &job) {
  // A socket error (often while writing a heartbeat) closes a connection
  // whose call has not started yet: the call is cancelled, as on a hang-up
  // (ClientLossEndsCall).
  if (ClientLossEndsCall(job.state())) FinishJob(job, EndReason::kHangup);
}

void Scheduler::OnArgsReceived(Job &job, bool resumed) {
  spdlog::debug("event=args_received job={} call={} function={} resumed={}", job.id(),
                job.params().call_id, job.params().function, resumed);
  // The client shut its write side while the arguments were read (which is
  // normal for a client that sent everything): now the routine runs, a
  // heartbeat can tell whether it is still there to read the result.
  if (job.params().two_phase() && job.conn()) {
    // The executable sends the ticket next: the client may then leave, and
    // its leaving cancels nothing. ninfd only closes its own descriptor: a
    // shutdown (Finish) would shut the socket the executable still writes
    // the ticket to.
    daemon::Connection *conn = job.conn();
    job.detach_conn();
    conn->Close();
  }
  if (job.conn() && job.conn()->peer_shut_write()) Probe(job);
  observer_.PublishLoad();  // the call's size is known now
}

void Scheduler::OnArriving(Job &job, uint64_t bytes) {
  const ArrivalGate::Call call{job.id(), desk_.ArrivalClient(job),
                               ReportedArrivalBytes(bytes, settings_.max_call_bytes)};
  if (!job.call().awaits_room) {
    // Its whole frame is in this host's socket already (at most a socket
    // buffer of it): counted, room or not, as a call writing its result is.
    desk_.arrivals().Rehold(call);
    observer_.PublishLoad();
    return;
  }
  if (stopping_) {
    job.AnswerRoom(Status(NINF_ERR_SHUTTING_DOWN, "the server is shutting down"));
    return;
  }
  if (desk_.arrivals().Offer(call, desk_.Bounds())) {
    job.AnswerRoom(Status::Ok());
  } else {
    spdlog::info(
        "event=call_arrival_queued job={} call={} function={} user={} persistent=1 bytes={} "
        "arriving={} arrival_bytes={} waiting={}",
        job.id(), job.params().call_id, job.params().function, ShownUser(job.params().owner),
        call.bytes, desk_.arrivals().held().calls, desk_.arrivals().held().bytes,
        desk_.arrivals().waiting().calls);
  }
  observer_.PublishLoad();
}

void Scheduler::OnWantSlot(Job &job) {
  // A persistent executable's next call waits for a slot like any other.
  if (stopping_) {
    job.RefuseSlot(Status(NINF_ERR_SHUTTING_DOWN, "the server is shutting down"));
    return;
  }
  // A reload may have revoked the handle's user, or taken the function
  // from it: the handle's next call is where ninfd can say so. (A first
  // call admitted after arrival was checked at its CALL.)
  if (job.call().calls_done > 0) {
    if (Status st = MayContinue(users_, counters_, settings_, job); !st.ok()) {
      daemon::RateLimitedWarn("call_denied",
                              "event=call_denied job={} call={} function={} user={} persistent=1 "
                              "error={}",
                              job.id(), job.params().call_id, job.params().function,
                              ShownUser(job.params().owner), daemon::Quoted(st.message()));
      job.RefuseSlot(st);
      return;
    }
    job.notes.policy_checked = policy_epoch_;
  }
  int threads = 0, cores = 0;
  switch (desk_.admission().Offer(desk_.DemandOf(job), desk_.Now(), &threads, &cores)) {
    case Admission::Decision::kRun:
      desk_.AdmitJob(job, threads, cores);
      break;
    case Admission::Decision::kQueue:
      spdlog::info(
          "event=call_queued job={} call={} function={} user={} persistent={} held={} queued={}",
          job.id(), job.params().call_id, job.params().function, ShownUser(job.params().owner),
          job.params().persistent, job.call().args_first, desk_.admission().queued());
      // No handle keeps a slot (or its threads) while a call waits.
      desk_.NoteWait();
      TakeBackKeptSlots();
      break;  // AdmitQueued grants it
    case Admission::Decision::kReject:
      ++counters_.rejected;
      job.RefuseSlot(Status(NINF_ERR_SERVER, "server busy"));
      break;
    case Admission::Decision::kUserQueueFull:
      ++counters_.rejected;
      job.RefuseSlot(desk_.UserQueueFull(job));
      break;
  }
  AdmitArrivals();  // an admitted call left room under the arrival bounds
  observer_.PublishLoad();
}

void Scheduler::OnReplying(Job &job) {
  // release_slot = "computed": a call admitted after arrival gives its slot
  // and threads back when its routine returns, so that its result's
  // transfer (a slow link's) overlaps the next call's computation, as the
  // 1998 server overlapped communication. Its memory still counts against
  // the arrival bounds until the call is done. A repeated REPLYING finds
  // the slot already given back.
  if (!job.call().slot_held ||
      ReleaseOf(job.notes.plan, settings_.release_slot) != SlotRelease::kComputed)
    return;
  // A handle that will keep its slot (nobody waits for one) keeps it
  // through its reply too.
  if (desk_.MayKeepSlot(job, stopping_, policy_epoch_)) return;
  job.SlotReleased();
  desk_.admission().Release(job.call().cores, job.params().owner);
  desk_.arrivals().Rehold({job.id(), desk_.ArrivalClient(job), job.call().arrival.bytes_in});
  AdmitQueued();
}

void Scheduler::OnClientGone(Job &job) {
  spdlog::info(
      "event=client_gone job={} call={} function={} user={} pid={} reason=heartbeat_failed",
      job.id(), job.params().call_id, job.params().function, ShownUser(job.params().owner),
      job.pid());
  job.Kill(KillReason::kClientGone);
}

void Scheduler::OnCallDone(Job &job, const ControlMsg &msg) {
  // A call that failed while it waited for its slot with its arguments in
  // (kHeld: its heartbeat to a gone client failed, say) waits no more, and
  // leaves the arrival bounds.
  desk_.admission().Withdraw(job.id());
  // (Or a handle's later call that failed waiting for room: one behind it
  // may go now.)
  const bool withdrawn = desk_.arrivals().Withdraw(job.id());
  if (withdrawn || desk_.arrivals().holds(job.id())) {
    desk_.arrivals().Done(job.id());
    AdmitArrivals();
  }
  RecordCallDone(counters_, settings_, job, msg);
  if (job.call().last_call_kept) ++counters_.kept_slot_calls;
  // A handle granted as brief whose call on the kept slot was not brief
  // gives the slot back: its next call asks, and holds cores if it needs them.
  if (KeepsSlot(job.state()) && OutgrewBrief(job.call().cores, msg.compute_seconds) &&
      job.TakeLease() == SlotLease::Taken::kNow) {
    OnLeaseReturned(job);
    return;
  }
  if (IdleBetweenCalls(job.state()) && job.call().slot_held) {
    // Idle between calls, a persistent executable holds no slot, unless
    // no other call asks for one: then it keeps it for its next call.
    if (msg.error_code == NINF_OK && !OutgrewBrief(job.call().cores, msg.compute_seconds) &&
        desk_.MayKeepSlot(job, stopping_, policy_epoch_) && job.GrantLease()) {
      observer_.PublishLoad();
      return;
    }
    job.SlotReleased();
    desk_.admission().Release(job.call().cores, job.params().owner);
    AdmitQueued();
  }
  observer_.PublishLoad();
}

void Scheduler::OnReleased(Job &job) {
  Process *p = job.ReleaseProcess();
  p->CountCall();
  // Back in the pool before the job ends: ending it frees its slot, and a
  // call of the same function waiting for one takes this process at once.
  const int pid = p->pid();
  const uint64_t calls = p->calls_served();
  const bool kept = supply_.TakeBack(job, p, stopping_);
  spdlog::debug("event=executable_{} job={} function={} pid={} calls={}",
                kept ? "released" : "retired", job.id(), job.params().function, pid, calls);
  FinishJob(job, EndReason::kReleased);
}

void Scheduler::OnExit(Job &job) { FinishJob(job, EndReason::kExited); }

void Scheduler::OnLeaseReturned(Job &job) {
  job.SlotReleased();
  desk_.admission().Release(job.call().cores, job.params().owner);
  AdmitQueued();
  observer_.PublishLoad();
}

void Scheduler::PolicyChanged() {
  ++policy_epoch_;
  TakeBackKeptSlots();
}

void Scheduler::TakeBackKeptSlots() {
  // By id: a slot given back may start other jobs (AdmitQueued).
  std::vector<uint64_t> kept;
  for (auto &[id, job] : jobs_)
    if (KeepsSlot(job->state())) kept.push_back(id);
  for (uint64_t id : kept) {
    auto it = jobs_.find(id);
    if (it != jobs_.end() && it->second->TakeLease() == SlotLease::Taken::kNow)
      OnLeaseReturned(*it->second);
  }
}

void Scheduler::OnKeep(Job &job, const ControlMsg &msg, daemon::UniqueFd data) {
  kept_.OnKeep(job, msg, std::move(data));
}

void Scheduler::OnProve(Job &job, const ControlMsg &msg) { kept_.OnProve(job, msg); }

void Scheduler::OnFetchAsk(Job &job, const ControlMsg &msg) { kept_.OnFetchAsk(job, msg); }

}  // namespace ninf::server
