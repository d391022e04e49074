#include "job.h"

#include <fcntl.h>

#include <cassert>
#include <cstring>

#include "connection.h"
#include "log.h"

namespace ninf::server {

Job::Job(JobEvents *events, uint64_t id, CallParams params, Connection *conn)
    : events_(events), id_(id), params_(std::move(params)), conn_(conn) {}

bool Job::Handoff(Process *process, int threads, uint64_t max_call_bytes) {
  assert(!process_ && conn_);
  // The executable shares this socket (same open file description), and its
  // receive path must block rather than spin; ninfd's own I/O on the socket
  // uses MSG_DONTWAIT and does not care.
  int fd = conn_->fd();
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
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
  call_open_ = true;
  call_started = Clock::now();
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
      if (!call_open_) {  // a further call of a persistent executable
        call_open_ = true;
        call_started = Clock::now();
      }
      replying_ = false;
      if (conn_) conn_->WatchHangup(true);
      events_->OnArgsReceived(*this);
      break;
    case CTL_REPLYING:
      // From here on a hangup is the client leaving after its result.
      replying_ = true;
      if (conn_) conn_->WatchHangup(false);
      break;
    case CTL_CALL_DONE:
      if (!call_open_) break;
      call_open_ = false;
      replying_ = false;
      ++calls_done_;
      if (conn_) conn_->WatchHangup(false);
      events_->OnCallDone(*this, msg);
      break;
    default:
      spdlog::warn("event=control_unknown job={} call={} function={} kind={}", id_, params_.call_id,
                   params_.function, msg.kind);
  }
}

void Job::OnExit(Process &) { events_->OnExit(*this); }

std::string Job::ExitDescription() const {
  return process_ ? process_->ExitDescription() : "not started";
}

void Job::Close() {
  if (process_) process_->Close();
  delete this;
}

}  // namespace ninf::server
