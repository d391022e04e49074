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

namespace {

// CTL_SLOT: the answer to a call waiting for its slot (NINF_OK: go on with
// the threads granted, after the time it waited).
// An answer the executable waits for. A failure means the executable is
// gone: its exit ends the job.
void Answer(Job &job, const ControlMsg &answer) {
  if (int err = job.Tell(answer); err != 0)
    spdlog::debug("event=control_send_failed job={} pid={} error={}", job.id(), job.pid(),
                  daemon::Quoted(std::strerror(err)));
}

void AnswerSlot(Job &job, int32_t code) {
  ControlMsg answer;
  answer.kind = CTL_SLOT;
  answer.error_code = code;
  answer.threads = static_cast<uint32_t>(job.call().threads);
  answer.queue_seconds = job.call().QueueSeconds();
  Answer(job, answer);
}

// A control message the job's state does not allow, logged (the caller
// answers or kills as the kind requires).
void WarnUnexpected(const Job &job, const std::string &kind) {
  spdlog::warn("event=control_unexpected job={} call={} function={} kind={} state={}", job.id(),
               job.params().call_id, job.params().function, kind, JobStateName(job.state()));
}

}  // namespace

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

void Job::Admit(int threads, int cores) {
  assert(AwaitsArguments(state_) || InQueue(state_));
  call_.admitted = Clock::now();
  call_.threads = threads;
  call_.cores = cores;
  call_.slot_held = true;
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
    AnswerSlot(*this, NINF_OK);
    return;
  }
  // A persistent executable's next call: its arguments wait in the socket.
  call_.call_started = call_.admitted;
  SetState(JobState::kReceiving);
  AnswerSlot(*this, NINF_OK);
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
  AnswerSlot(*this, st.code());
}

void Job::End() { SetState(JobState::kEnded); }

void Job::AnswerRoom(const Status &st) {
  assert(call_.awaits_room);
  call_.awaits_room = false;
  // The arguments' transfer is watched from the room, not from the ask.
  call_.progress_at = Clock::now();
  progress_moved_ = 0;
  Answer(*this, {.kind = CTL_ROOM, .error_code = st.code()});
}

bool Job::Handoff(Process *process, uint64_t max_call_bytes, bool reusable) {
  assert(!process_ && conn_ && AwaitsHandoff(state_));
  // The executable shares this socket (same open file description), and its
  // receive path must block rather than spin; ninfd's own I/O on the socket
  // uses MSG_DONTWAIT and does not care. A redirected client keeps its
  // socket with ninfd (control_relay.h): FRAME_REDIRECT is ninfd's to send.
  const bool redirected = process->redirects();
  const int fd = redirected ? -1 : conn_->fd();
  const int flags = redirected ? 0 : ::fcntl(fd, F_GETFL);
  if (!redirected && (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)) {
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
  if (conn_->transport().sealed()) {  // TLS: the key the client got in FRAME_HANDOVER
    handoff.flags |= kHandoffTls;
    std::memcpy(handoff.psk, conn_->handover_psk().data(), sizeof handoff.psk);
  } else if (redirected && params_.redirect_tls) {
    // Redirected under TLS: the key FRAME_REDIRECT will carry inside ninfd's
    // session (or on the same-host socket), for the client's session with
    // rank 0.
    if (Status st = conn_->NewRedirectKey(); !st.ok()) {
      spdlog::warn("event=handoff_failed job={} call={} function={} pid={} error={}", id_,
                   params_.call_id, params_.function, process->pid(), daemon::Quoted(st.message()));
      return false;
    }
    handoff.flags |= kHandoffTls;
    std::memcpy(handoff.psk, conn_->handover_psk().data(), sizeof handoff.psk);
  }
  // Admitted after arrival: no slot and no threads yet (CTL_SLOT brings
  // them once the arguments are in).
  call_.args_first = notes.plan.ArgumentsFirst();
  if (call_.args_first) handoff.flags |= kHandoffArgsFirst;
  if (params_.persistent && LaterCallsPlan(notes.plan).ArgumentsFirst())
    handoff.flags |= kHandoffLaterArgsFirst;
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
  if (call_.kill_reason == KillReason::kNone) {
    call_.kill_reason = reason;
    call_.kill_detail = std::move(detail);
  }
  process_->Kill();
}

void Job::OnControl(Process &, const ControlMsg &msg, daemon::UniqueFd attached) {
  switch (msg.kind) {
    case CTL_KEEP:
      if (CallOpen(Observed(*this)) && attached.get() >= 0) {
        events_->OnKeep(*this, msg, std::move(attached));
        break;
      }
      WarnUnexpected(*this, "keep");
      if (msg.param != kKeepWholeResult)
        Tell(KeptAnswer(Status(NINF_ERR_PROTOCOL, "unexpected KEEP"), 0, {}));
      break;
    case CTL_PROVE:
      // Only while the call reads its arguments, which is when it fetches.
      if (ReadingArguments(Observed(*this))) {
        events_->OnProve(*this, msg);
        break;
      }
      WarnUnexpected(*this, "prove");
      Tell(ProvedAnswer(Status(NINF_ERR_PROTOCOL, "unexpected PROVE"), nullptr));
      break;
    case CTL_FETCH_ASK:
      if (ReadingArguments(Observed(*this))) {
        events_->OnFetchAsk(*this, msg);
        break;
      }
      WarnUnexpected(*this, "fetch_ask");
      Tell(FetchAnswer(Status(NINF_ERR_PROTOCOL, "unexpected FETCH_ASK")));
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
      // A handle's executable offers its kept slot's page with its first
      // CALL_DONE.
      if (attached.get() >= 0 && params_.persistent && params_.may_keep_slot && !kept_.valid())
        if (Status st = kept_.Adopt(std::move(attached)); !st.ok())
          spdlog::warn("event=slot_lease_refused job={} call={} function={} error={}", id_,
                       params_.call_id, params_.function, daemon::Quoted(st.message()));
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
      // its arguments (watched for progress, no longer idle), held to the
      // arrival bounds as a first call is.
      if (KeepsSlot(state_)) ReturnUnusedLease();
      if (IdleBetweenCalls(state_) && params_.persistent && call_.args_first) {
        SetState(JobState::kArriving);
        call_.awaits_room = (msg.flags & kArrivingAsksRoom) != 0;
        events_->OnArriving(*this, msg.bytes_in);
      } else if (msg.flags & kArrivingAsksRoom) {
        // No call may arrive here: the executable hears so rather than
        // waiting for room for ever.
        WarnUnexpected(*this, "arriving");
        Tell({.kind = CTL_ROOM, .error_code = NINF_ERR_PROTOCOL});
      }
      break;
    case CTL_CLIENT_GONE:
      if (CallOpen(Observed(*this))) events_->OnClientGone(*this);
      break;
    case CTL_REDIRECTED:
      // The relay's word that rank 0 has the hand-off: the client may come.
      // (Gone already: rank 0 waits for it in vain and reports the call.)
      if (conn_ && CallOpen(Observed(*this)) && msg.call_id == params_.call_id)
        conn_->SendRedirect(msg);
      break;
    case CTL_RELEASED:
      if (OneShotDone(state_) && call_.reusable) {
        events_->OnReleased(*this);  // ends the job: nothing may follow here
        break;
      }
      WarnUnexpected(*this, "released");
      Kill(KillReason::kNone);
      break;
    case CTL_HANDOFF:  // only ninfd sends these
    case CTL_SLOT:
    case CTL_KEPT:
    case CTL_PROVED:
    case CTL_PROBE:
    default:
      WarnUnexpected(*this, std::to_string(msg.kind));
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
    const bool kept = kept_.lease().StillLeased();
    SetState(kept ? JobState::kLeased : JobState::kIdle);
    if (conn_) conn_->WatchHangup(kept);
    events_->OnCallDone(*this, msg);
    return;
  }
  if (!CallOpen(state_)) return;  // e.g. a refused frame while idle: no call was open
  call_.last_call_kept = false;
  call_.awaits_room = false;  // it failed waiting (the scheduler withdraws it)
  // A handle's later calls follow their own plan (the executable was told
  // at the hand-off: kHandoffLaterArgsFirst).
  if (params_.persistent) {
    notes.plan = LaterCallsPlan(notes.plan);
    call_.args_first = notes.plan.ArgumentsFirst();
  }
  SetState(params_.persistent ? JobState::kIdle : JobState::kDone);
  ++call_.calls_done;
  if (conn_) conn_->WatchHangup(false);
  events_->OnCallDone(*this, msg);
}

void Job::OnExit(Process &) { events_->OnExit(*this); }

bool Job::GrantLease() {
  assert(IdleBetweenCalls(state_) && call_.slot_held);
  if (!kept_.lease().Grant()) return false;
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
  if (kept_.lease().TakeBack() != SlotLease::Taken::kNow) return SlotLease::Taken::kAfterCall;
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

void Job::NoteLeasedStep(Clock::time_point now) {
  if (!kept_.NewStep(state_)) return;
  call_.progress_at = now;
  progress_moved_ = 0;
}

Process *Job::ReleaseProcess() {
  assert(process_ && !process_->exited() && OneShotDone(state_));
  return std::exchange(process_, nullptr);
}

int Job::Tell(ControlMsg msg) {
  if (!process_) return ESRCH;
  msg.call_id = params_.call_id;
  return process_->Send(msg);
}

JobFacts FactsOf(const Job &job, std::size_t queued) {
  JobFacts f;
  f.state = Observed(job);  // a call begun on a kept slot is a call under way
  f.persistent = job.params().persistent;
  f.kill_reason = job.call().kill_reason;
  f.function = job.params().function;
  f.exit_description = job.exited() ? job.process()->ExitDescription() : "-";
  f.term_signal = job.process() ? job.process()->term_signal() : 0;
  f.kill_detail = job.call().kill_detail;
  f.cpu_limit_seconds = job.params().limits.cpu_seconds;
  f.queued = queued;
  return f;
}

ControlMsg KeptAnswer(const Status &st, uint64_t store_id, const std::string &token) {
  ControlMsg answer;
  answer.kind = CTL_KEPT;
  answer.error_code = st.code();
  answer.store_id = store_id;
  std::memcpy(answer.token, token.data(), std::min(token.size(), sizeof answer.token));
  return answer;
}

ControlMsg ProvedAnswer(const Status &st, const uint8_t *proof) {
  ControlMsg answer;
  answer.kind = CTL_PROVED;
  answer.error_code = st.code();
  if (proof) std::memcpy(answer.proof, proof, sizeof answer.proof);
  return answer;
}

ControlMsg FetchAnswer(const Status &st) {
  ControlMsg answer;
  answer.kind = CTL_FETCH_ANSWER;
  answer.error_code = st.code();
  return answer;
}

void Probe(Job &job) {
  if (HeartbeatWriterIn(Observed(job)) != HeartbeatWriter::kExecutable) return;
  ControlMsg probe;
  probe.kind = CTL_PROBE;
  (void)job.Tell(probe);  // a dead executable's exit ends the job anyway
}

}  // namespace ninf::server
