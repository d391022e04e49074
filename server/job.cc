#include "server/job.h"

#include <fcntl.h>

#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "daemon/connection.h"
#include "daemon/log.h"

namespace ninf::server {

Job::Job(JobEvents *events, uint64_t id, CallParams params, daemon::Connection *conn)
    : events_(events), id_(id), params_(std::move(params)), conn_(&ClientConnection::Of(*conn)) {}

// The job's process has exited by now (the server ends jobs from OnExit, or
// before any process was started): its handles only need closing.
Job::~Job() {
  if (process_) process_->Close();
}

void Job::SetState(JobState next) {
  // A move the table (job_state.h) does not allow is a bug in ninfd: caught
  // in debug builds, logged in release ones (the job goes on as before).
  if (!MayMove(state_, next)) {
    spdlog::error("event=job_state_unexpected job={} call={} from={} to={}", id_, params_.call_id,
                  JobStateName(state_), JobStateName(next));
    assert(false && "a job state change the transition table does not allow");
  }
  spdlog::trace("event=job_state job={} call={} from={} to={}", id_, params_.call_id,
                JobStateName(state_), JobStateName(next));
  state_ = next;
  // Each state's transfer is watched from its start.
  call_.progress_at = Clock::now();
  progress_moved_ = 0;
  if (IdleBetweenCalls(next) || KeepsSlot(next)) call_.idle_since = call_.progress_at;
}

void Job::NoteProgress(uint64_t moved, Clock::time_point now) {
  if (moved == progress_moved_) return;
  progress_moved_ = moved;
  call_.progress_at = now;
}

void Job::Queue() {
  assert(AwaitsArguments(state_));
  SetState(JobState::kQueued);
}

void Job::QueueArrival() {
  assert(AwaitsArguments(state_));
  SetState(JobState::kArrivalQueued);
}

void Job::PassArrival() {
  assert(AwaitsArguments(state_) || AwaitsArrivalRoom(state_));
  SetState(JobState::kHandingOver);
}

void Job::Admit(int threads) {
  assert(AwaitsArguments(state_) || InQueue(state_));
  call_.admitted = Clock::now();
  call_.threads = threads;
  slot_held_ = true;
  if (!process_) {
    SetState(JobState::kStarting);
    return;
  }
  if (state_ == JobState::kHeld) {
    // Admitted after arrival: the arguments are in, the routine runs as soon
    // as CTL_SLOT is read (CTL_ARGS_RECEIVED follows). The call's wall-clock
    // budget counts from here, not from its transfer or its wait.
    call_.call_started = call_.admitted;
    call_.computing_since = call_.admitted;
    SetState(JobState::kComputing);
    SendSlotAnswer(NINF_OK);
    return;
  }
  // A persistent executable's next call: its arguments wait in the socket.
  call_.call_started = call_.admitted;
  SetState(JobState::kReceiving);
  SendSlotAnswer(NINF_OK);
}

void Job::WantSlot(const ControlMsg &msg) {
  assert(IdleBetweenCalls(state_) || state_ == JobState::kArriving);
  const Clock::time_point now = Clock::now();
  if (!call_.args_first) {
    call_.arrived = call_.wait_from = now;
    SetState(JobState::kQueued);
    return;
  }
  call_.arrival = msg;
  // A handle's next call arrived when its arguments began to come.
  if (call_.calls_done > 0 && std::isfinite(msg.recv_seconds) && msg.recv_seconds >= 0)
    call_.arrived = now - std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(msg.recv_seconds));
  call_.wait_from = now;
  SetState(JobState::kHeld);
}

void Job::RefuseSlot(const Status &st) {
  assert(InQueue(state_) || IdleBetweenCalls(state_));
  if (params_.persistent) SetState(JobState::kIdle);
  SendSlotAnswer(st.code());
}

void Job::Probe() {
  if (HeartbeatWriterIn(Observed()) != HeartbeatWriter::kExecutable || !process_) return;
  ControlMsg probe;
  probe.kind = CTL_PROBE;
  probe.call_id = params_.call_id;
  (void)process_->Send(probe);  // a dead executable's exit ends the job anyway
}

void Job::SendSlotAnswer(int32_t code) {
  ControlMsg answer;
  answer.kind = CTL_SLOT;
  answer.call_id = params_.call_id;
  answer.error_code = code;
  answer.threads = static_cast<uint32_t>(call_.threads);
  answer.queue_seconds = call_.QueueSeconds();
  // A failure means the executable is gone: its exit ends the job.
  if (int err = process_->Send(answer); err != 0)
    spdlog::debug("event=control_send_failed job={} pid={} error={}", id_, process_->pid(),
                  daemon::Quoted(std::strerror(err)));
}

void Job::End() { SetState(JobState::kEnded); }

JobFacts Job::Facts(std::size_t queued) const {
  JobFacts f;
  f.state = Observed();  // a call begun on a kept slot is a call under way
  f.persistent = params_.persistent;
  f.kill_reason = kill_reason_;
  f.function = params_.function;
  f.exit_description = exited() ? ExitDescription() : "-";
  f.term_signal = term_signal();
  f.kill_detail = kill_detail_;
  f.cpu_limit_seconds = params_.limits.cpu_seconds;
  f.queued = queued;
  return f;
}

bool Job::Handoff(Process *process, uint64_t max_call_bytes, bool reusable) {
  assert(!process_ && conn_ && AwaitsHandoff(state_));
  // The executable shares this socket (same open file description), and its
  // receive path must block rather than spin; ninfd's own I/O on the socket
  // uses MSG_DONTWAIT and does not care.
  const int fd = conn_->fd();
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
    spdlog::warn("event=handoff_failed job={} call={} function={} pid={} error={}", id_,
                 params_.call_id, params_.function, process->pid(),
                 daemon::Quoted(std::strerror(errno)));
    return false;
  }
  ControlMsg handoff;
  handoff.kind = CTL_HANDOFF;
  handoff.call_id = params_.call_id;
  handoff.max_call_bytes = max_call_bytes;
  call_.reusable = reusable && !params_.persistent;
  handoff.flags = (params_.persistent ? kHandoffPersistent : 0) |
                  (call_.reusable ? kHandoffReusable : 0) |
                  (params_.key_id.empty() ? 0 : kHandoffKeyed);
  // The key its data references are fetched with (control.h: CTL_PROVE).
  std::memcpy(handoff.key_id, params_.key_id.data(),
              std::min(params_.key_id.size(), sizeof handoff.key_id));
  if (conn_->sealed()) {  // TLS: the key the client got in FRAME_HANDOVER
    handoff.flags |= kHandoffTls;
    std::memcpy(handoff.psk, conn_->handover_psk().data(), sizeof handoff.psk);
  }
  // Admitted after arrival: no slot and no threads yet (CTL_SLOT brings
  // them once the arguments are in).
  call_.args_first = plan_.ArgumentsFirst();
  if (call_.args_first) handoff.flags |= kHandoffArgsFirst;
  handoff.threads = static_cast<uint32_t>(call_.threads);
  handoff.queue_seconds = call_.args_first ? 0 : call_.QueueSeconds();
  handoff.heartbeat_ms = params_.heartbeat_ms;
  handoff.redirect_wait_ms = params_.redirect_wait_ms;
  handoff.store_id = params_.store_id;
  handoff.store_seconds = params_.store_seconds;
  std::memcpy(handoff.token, params_.token.data(),
              std::min(params_.token.size(), sizeof handoff.token));
  handoff.cpu_seconds = static_cast<uint32_t>(
      std::min<int64_t>(params_.limits.cpu_seconds, std::numeric_limits<uint32_t>::max()));
  if (int err = process->Handoff(handoff, fd); err != 0) {
    spdlog::warn("event=handoff_failed job={} call={} function={} pid={} error={}", id_,
                 params_.call_id, params_.function, process->pid(),
                 daemon::Quoted(std::strerror(err)));
    return false;
  }
  process_ = process;
  process_->set_owner(this);
  call_.call_started = call_.handed_at = Clock::now();
  SetState(call_.args_first ? JobState::kArriving : JobState::kReceiving);
  // A redirected client leaves this connection for the executable's own
  // (control_relay.h): its closing here cancels nothing. The executable
  // sees a client that goes away on the connection it serves.
  conn_->WatchHangup(!process->redirects());
  return true;
}

void Job::Kill(KillReason reason, std::string detail) {
  if (!process_ || process_->exited()) return;
  if (kill_reason_ == KillReason::kNone) {
    kill_reason_ = reason;
    kill_detail_ = std::move(detail);
  }
  process_->Kill();
}

void Job::OnControl(Process &, const ControlMsg &msg, daemon::UniqueFd attached) {
  switch (msg.kind) {
    case CTL_KEEP:
      if (CallOpen(Observed()) && attached.get() >= 0) {
        events_->OnKeep(*this, msg, std::move(attached));
        break;
      }
      spdlog::warn("event=control_unexpected job={} call={} function={} kind=keep state={}", id_,
                   params_.call_id, params_.function, JobStateName(state_));
      if (msg.param != kKeepWholeResult)
        SendKept(Status(NINF_ERR_PROTOCOL, "unexpected KEEP"), 0, {});
      break;
    case CTL_PROVE:
      // Only while the call reads its arguments, which is when it fetches.
      if (ReadingArguments(Observed())) {
        events_->OnProve(*this, msg);
        break;
      }
      spdlog::warn("event=control_unexpected job={} call={} function={} kind=prove state={}", id_,
                   params_.call_id, params_.function, JobStateName(state_));
      SendProved(Status(NINF_ERR_PROTOCOL, "unexpected PROVE"), nullptr);
      break;
    case CTL_ARGS_RECEIVED:
      call_.work_flops = msg.work_flops;
      call_.computing_since = Clock::now();
      OnArgsReceived();
      break;
    case CTL_REPLYING:
      OnReplying();
      break;
    case CTL_CALL_DONE:
      if (attached.get() >= 0) AdoptLeasePage(std::move(attached));
      OnCallDone(msg);
      break;
    case CTL_WANT_SLOT:
      if (KeepsSlot(state_)) ReturnUnusedLease();
      if ((IdleBetweenCalls(state_) && params_.persistent) ||
          (state_ == JobState::kArriving && call_.args_first)) {
        WantSlot(msg);
        events_->OnWantSlot(*this);
      }
      break;
    case CTL_ARRIVING:
      // A handle's next call, admitted after arrival: from idle to reading
      // its arguments (watched for progress, no longer idle).
      if (KeepsSlot(state_)) ReturnUnusedLease();
      if (IdleBetweenCalls(state_) && params_.persistent && call_.args_first)
        SetState(JobState::kArriving);
      break;
    case CTL_CLIENT_GONE:
      if (CallOpen(Observed())) events_->OnClientGone(*this);
      break;
    case CTL_RELEASED:
      if (OneShotDone(state_) && call_.reusable) {
        events_->OnReleased(*this);  // ends the job: nothing may follow here
        break;
      }
      spdlog::warn("event=control_unexpected job={} call={} function={} kind=released state={}",
                   id_, params_.call_id, params_.function, JobStateName(state_));
      Kill(KillReason::kNone);
      break;
    case CTL_HANDOFF:  // only ninfd sends these
    case CTL_SLOT:
    case CTL_KEPT:
    case CTL_PROVED:
    case CTL_PROBE:
    default:
      spdlog::warn("event=control_unexpected job={} call={} function={} kind={} state={}", id_,
                   params_.call_id, params_.function, msg.kind, JobStateName(state_));
  }
}

void Job::OnArgsReceived() {
  if (!ReadingArguments(state_)) return;  // a duplicate: nothing changes
  SetState(JobState::kComputing);
  events_->OnArgsReceived(*this, call_.calls_done > 0);
}

void Job::OnReplying() {
  if (!CallOpen(state_)) return;
  // From here on a hangup is the client leaving after its result.
  SetState(JobState::kReplying);
  if (conn_) conn_->WatchHangup(false);
  events_->OnReplying(*this);
}

void Job::OnCallDone(const ControlMsg &msg) {
  if (KeepsSlot(state_)) {
    // A call on the kept slot, which ninfd learns of only now. The lease
    // goes on unless the executable gave it back (it was taken back during
    // the call): then the scheduler frees the slot, as after any call.
    ++call_.calls_done;
    call_.last_call_kept = true;
    const bool kept = lease_.StillLeased();
    SetState(kept ? JobState::kLeased : JobState::kIdle);
    if (conn_) conn_->WatchHangup(kept);
    events_->OnCallDone(*this, msg);
    return;
  }
  if (!CallOpen(state_)) return;  // e.g. a refused frame while idle: no call was open
  call_.last_call_kept = false;
  SetState(params_.persistent ? JobState::kIdle : JobState::kDone);
  ++call_.calls_done;
  if (conn_) conn_->WatchHangup(false);
  events_->OnCallDone(*this, msg);
}

void Job::OnExit(Process &) { events_->OnExit(*this); }

void Job::AdoptLeasePage(daemon::UniqueFd page) {
  // A handle's executable offers it with its first CALL_DONE. Mapped only
  // when it is a sealed page (the executable cannot shrink it under ninfd).
  if (!params_.persistent || !params_.may_keep_slot || lease_.valid()) return;
  if (Status st = SlotLease::Map(page.release(), &lease_); !st.ok())
    spdlog::warn("event=slot_lease_refused job={} call={} function={} error={}", id_,
                 params_.call_id, params_.function, daemon::Quoted(st.message()));
}

bool Job::GrantLease() {
  assert(IdleBetweenCalls(state_) && slot_held_);
  if (!lease_.Grant()) return false;
  SetState(JobState::kLeased);
  // A call may begin on the slot without a word to ninfd: a hang-up from
  // here on may be a client leaving its call (Observed tells).
  if (conn_) conn_->WatchHangup(true);
  return true;
}

SlotLease::Taken Job::TakeLease() {
  if (!KeepsSlot(state_)) return SlotLease::Taken::kNotLeased;
  // In a call, the slot frees at its CALL_DONE; so it does when the
  // executable gave it back already (kNotLeased: its CALL_DONE, which
  // follows that at once, is on its way and finds the lease ended).
  if (lease_.TakeBack() != SlotLease::Taken::kNow) return SlotLease::Taken::kAfterCall;
  SetState(JobState::kIdle);
  if (conn_) conn_->WatchHangup(false);
  return SlotLease::Taken::kNow;
}

void Job::ReturnUnusedLease() {
  // The executable asks for a slot (ARRIVING, WANT_SLOT) although it kept
  // one: it began this call before the grant reached the page. It is on
  // the asking path now and begins no call on the lease until answered.
  if (TakeLease() == SlotLease::Taken::kNow) {
    events_->OnLeaseReturned(*this);
    return;
  }
  spdlog::warn(
      "event=control_unexpected job={} call={} function={} kind=slot_request "
      "state=leased_call",
      id_, params_.call_id, params_.function);
  Kill(KillReason::kNone);
}

JobState Job::Observed() const {
  if (!KeepsSlot(state_)) return state_;
  if (!lease_.InCall()) return JobState::kIdle;
  switch (lease_.Phase()) {
    case kLeasePhaseReceiving:
      return JobState::kReceiving;
    case kLeasePhaseReplying:
      return JobState::kReplying;
    case kLeasePhaseNone:
    case kLeasePhaseComputing:
      return JobState::kComputing;
  }
  return JobState::kComputing;
}

Clock::time_point Job::ObservedCallStarted() const {
  if (!KeepsSlot(state_) || !lease_.InCall()) return call_.call_started;
  // The executable's CLOCK_MONOTONIC is steady_clock's here; a time it
  // reports from the future is taken as now.
  const Clock::time_point now = Clock::now();
  const Clock::time_point reported{std::chrono::duration_cast<Clock::duration>(
      std::chrono::nanoseconds(lease_.CallStartedNs()))};
  return reported > now ? now : std::max(reported, call_.idle_since);
}

void Job::NoteLeasedStep(Clock::time_point now) {
  if (!KeepsSlot(state_) || !lease_.InCall()) return;
  const uint64_t calls = lease_.LeasedCalls();
  const LeasePhase phase = lease_.Phase();
  if (calls == lease_seen_calls_ && phase == lease_seen_phase_) return;
  lease_seen_calls_ = calls;
  lease_seen_phase_ = phase;
  call_.progress_at = now;
  progress_moved_ = 0;
}

void Job::SendKept(const Status &st, uint64_t store_id, const std::string &token) {
  if (!process_) return;
  ControlMsg answer;
  answer.kind = CTL_KEPT;
  answer.call_id = params_.call_id;
  answer.error_code = st.code();
  answer.store_id = store_id;
  std::memcpy(answer.token, token.data(), std::min(token.size(), sizeof answer.token));
  (void)process_->Send(answer);  // a dead executable's exit ends the job anyway
}

void Job::SendProved(const Status &st, const uint8_t *proof) {
  if (!process_) return;
  ControlMsg answer;
  answer.kind = CTL_PROVED;
  answer.call_id = params_.call_id;
  answer.error_code = st.code();
  if (proof) std::memcpy(answer.proof, proof, sizeof answer.proof);
  (void)process_->Send(answer);  // a dead executable's exit ends the job anyway
}

Process *Job::ReleaseProcess() {
  assert(process_ && !process_->exited() && OneShotDone(state_));
  return std::exchange(process_, nullptr);
}

std::string Job::ExitDescription() const {
  return process_ ? process_->ExitDescription() : "not started";
}

}  // namespace ninf::server
