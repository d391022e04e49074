#include "job.h"

#include <fcntl.h>

#include <cassert>
#include <cstring>

#include "connection.h"
#include "log.h"

namespace ninf::server {

Job::Job(JobEvents *events, uint64_t id, CallParams params, Connection *conn)
    : events_(events), id_(id), params_(std::move(params)), conn_(conn) {}

// The job's process has exited by now (the server ends jobs from OnExit, or
// before any process was started): its handles only need closing.
Job::~Job() {
  if (process_) process_->Close();
}

void Job::SetState(JobState next) {
  spdlog::trace("event=job_state job={} call={} from={} to={}", id_, params_.call_id,
                JobStateName(state_), JobStateName(next));
  state_ = next;
}

void Job::Queue() {
  assert(state_ == JobState::kNew);
  SetState(JobState::kQueued);
}

void Job::Admit() {
  assert(state_ == JobState::kNew || state_ == JobState::kQueued);
  admitted_ = Clock::now();
  SetState(JobState::kStarting);
}

void Job::End() {
  assert(state_ != JobState::kEnded);
  SetState(JobState::kEnded);
}

JobFacts Job::Facts(std::size_t queued) const {
  return JobFacts{state_,
                  params_.persistent,
                  kill_reason_,
                  params_.function,
                  exited() ? ExitDescription() : "-",
                  queued};
}

bool Job::Handoff(Process *process, int threads, uint64_t max_call_bytes) {
  assert(!process_ && conn_ && state_ == JobState::kStarting);
  // The executable shares this socket (same open file description), and its
  // receive path must block rather than spin; ninfd's own I/O on the socket
  // uses MSG_DONTWAIT and does not care.
  const int fd = conn_->fd();
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
    spdlog::warn("event=handoff_failed job={} call={} function={} pid={} error={}", id_,
                 params_.call_id, params_.function, process->pid(), Quoted(std::strerror(errno)));
    return false;
  }
  ControlMsg handoff;
  handoff.kind = CTL_HANDOFF;
  handoff.call_id = params_.call_id;
  handoff.max_call_bytes = max_call_bytes;
  handoff.flags = params_.persistent ? kHandoffPersistent : 0;
  handoff.threads = static_cast<uint32_t>(threads);
  handoff.heartbeat_ms = params_.heartbeat_ms;
  if (int err = process->Handoff(handoff, fd); err != 0) {
    spdlog::warn("event=handoff_failed job={} call={} function={} pid={} error={}", id_,
                 params_.call_id, params_.function, process->pid(), Quoted(std::strerror(err)));
    return false;
  }
  process_ = process;
  process_->set_owner(this);
  call_started_ = Clock::now();
  SetState(JobState::kReceiving);
  conn_->WatchHangup(true);
  return true;
}

void Job::Kill(KillReason reason) {
  if (!process_ || process_->exited()) return;
  if (kill_reason_ == KillReason::kNone) kill_reason_ = reason;
  process_->Kill();
}

void Job::OnControl(Process &, const ControlMsg &msg) {
  switch (msg.kind) {
    case CTL_ARGS_RECEIVED:
      OnArgsReceived();
      break;
    case CTL_REPLYING:
      OnReplying();
      break;
    case CTL_CALL_DONE:
      OnCallDone(msg);
      break;
    case CTL_HANDOFF:  // only ninfd sends it
    default:
      spdlog::warn("event=control_unexpected job={} call={} function={} kind={} state={}", id_,
                   params_.call_id, params_.function, msg.kind, JobStateName(state_));
  }
}

void Job::OnArgsReceived() {
  const bool resumed = state_ == JobState::kIdle;          // a persistent executable's next call
  if (state_ != JobState::kReceiving && !resumed) return;  // a duplicate: nothing changes
  if (resumed) call_started_ = Clock::now();
  SetState(JobState::kComputing);
  if (conn_) conn_->WatchHangup(true);
  events_->OnArgsReceived(*this, resumed);
}

void Job::OnReplying() {
  if (!CallOpen(state_)) return;
  // From here on a hangup is the client leaving after its result.
  SetState(JobState::kReplying);
  if (conn_) conn_->WatchHangup(false);
}

void Job::OnCallDone(const ControlMsg &msg) {
  if (!CallOpen(state_)) return;  // e.g. a refused frame while idle: no call was open
  SetState(params_.persistent ? JobState::kIdle : JobState::kDone);
  ++calls_done_;
  if (conn_) conn_->WatchHangup(false);
  events_->OnCallDone(*this, msg);
}

void Job::OnExit(Process &) { events_->OnExit(*this); }

std::string Job::ExitDescription() const {
  return process_ ? process_->ExitDescription() : "not started";
}

}  // namespace ninf::server
