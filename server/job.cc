#include "job.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "connection.h"
#include "log.h"

extern char **environ;

namespace ninf::server {
namespace {

// The daemon's environment with the job's own variables put in place of any
// inherited ones.
std::vector<std::string> JobEnvironment(int threads, uint64_t call_id) {
  const std::string threads_text = std::to_string(threads);
  const std::pair<const char *, std::string> own[] = {
      {"OPENBLAS_NUM_THREADS", threads_text},
      {"OMP_NUM_THREADS", threads_text},
      {"NINF_CALL_ID", std::to_string(call_id)},
  };
  std::vector<std::string> env;
  for (char **e = environ; e && *e; ++e) {
    bool replaced = false;
    for (const auto &[name, value] : own) {
      std::size_t len = std::strlen(name);
      if (std::strncmp(*e, name, len) == 0 && (*e)[len] == '=') replaced = true;
    }
    if (!replaced) env.emplace_back(*e);
  }
  for (const auto &[name, value] : own) env.push_back(std::string(name) + "=" + value);
  return env;
}

}  // namespace

Job::Job(uv_loop_t *loop, JobEvents *events, uint64_t id, uint64_t call_id, std::string function,
         std::string executable, bool persistent, Connection *conn)
    : loop_(loop),
      events_(events),
      id_(id),
      call_id_(call_id),
      function_(std::move(function)),
      executable_(std::move(executable)),
      persistent_(persistent),
      conn_(conn) {}

Status Job::Start(int threads, uint64_t max_call_bytes) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return Status(NINF_ERR_EXECUTABLE,
                  std::string("cannot create the control channel: ") + std::strerror(errno));
  // Only our end is non-blocking: the executable may block on its end.
  control_fd_ = sv[0];
  ::fcntl(control_fd_, F_SETFL, ::fcntl(control_fd_, F_GETFL) | O_NONBLOCK);
  if (int rc = uv_poll_init(loop_, &control_poll_, control_fd_); rc != 0) {
    ::close(sv[1]);
    return Status(NINF_ERR_EXECUTABLE,
                  std::string("cannot watch the control channel: ") + uv_strerror(rc));
  }
  control_poll_.data = this;
  control_open_ = true;

  Status st = Spawn(threads, sv[1]);
  ::close(sv[1]);  // the child has its copy as fd 3
  if (!st.ok()) return st;
  started_ = true;
  call_open_ = true;
  call_started = Clock::now();

  // The executable shares this socket (same open file description), and its
  // receive path must block rather than spin; ninfd's own I/O on the socket
  // uses MSG_DONTWAIT and does not care.
  int fd = conn_->fd();
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  ControlMsg handoff;
  handoff.kind = CTL_HANDOFF;
  handoff.call_id = call_id_;
  handoff.max_call_bytes = max_call_bytes;
  handoff.flags = persistent_ ? kHandoffPersistent : 0;
  handoff.threads = static_cast<uint32_t>(threads);
  if (SendControl(control_fd_, handoff, fd) != 0) {
    // Most likely the executable died at once; its exit reports the rest.
    spdlog::warn("event=handoff_failed job={} call={} function={} error={}", id_, call_id_,
                 function_, Quoted(std::strerror(errno)));
    Kill(KillReason::kHandoffFailed);
  }
  uv_poll_start(&control_poll_, UV_READABLE, OnControlReadable);
  control_polling_ = true;
  conn_->WatchHangup(true);
  return Status::Ok();
}

Status Job::Spawn(int threads, int child_end) {
  std::vector<std::string> env = JobEnvironment(threads, call_id_);
  std::vector<char *> envp;
  for (std::string &e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  char *args[] = {executable_.data(), nullptr};

  uv_stdio_container_t stdio[4];
  stdio[0].flags = UV_IGNORE;
  stdio[1].flags = UV_INHERIT_FD;
  stdio[1].data.fd = 1;
  stdio[2].flags = UV_INHERIT_FD;
  stdio[2].data.fd = 2;
  stdio[kControlFd].flags = UV_INHERIT_FD;
  stdio[kControlFd].data.fd = child_end;

  uv_process_options_t options{};
  options.exit_cb = OnProcessExit;
  options.file = executable_.c_str();
  options.args = args;
  options.env = envp.data();
  options.stdio = stdio;
  options.stdio_count = 4;
  // Its own process group (and session): Ctrl-C on the daemon's terminal
  // does not hit running calls (shutdown lets them finish), and Kill() can
  // reach everything the executable started (mpirun and its ranks).
  options.flags = UV_PROCESS_DETACHED;

  process_.data = this;
  int rc = uv_spawn(loop_, &process_, &options);
  process_.data = this;
  process_open_ = true;
  if (rc != 0)
    return Status(NINF_ERR_EXECUTABLE, "cannot start the executable for '" + function_ + "' (" +
                                           executable_ + "): " + uv_strerror(rc));
  return Status::Ok();
}

void Job::Kill(KillReason reason) {
  // pid 0 would make kill(-pid) signal the daemon's own process group.
  if (!started_ || exited_ || process_.pid <= 0) return;
  if (kill_reason_ == KillReason::kNone) kill_reason_ = reason;
  // The group first (the executable's children), then the process itself in
  // case it has not reached setsid() yet.
  ::kill(-process_.pid, SIGKILL);
  uv_process_kill(&process_, SIGKILL);
}

void Job::OnControlReadable(uv_poll_t *handle, int status, int) {
  auto *self = static_cast<Job *>(handle->data);
  if (status < 0) {
    self->StopControl();
    return;
  }
  self->ReadControl();
}

void Job::ReadControl() {
  for (;;) {
    ControlMsg msg;
    int r = RecvControl(control_fd_, &msg, nullptr);
    if (r == 1) {
      HandleControl(msg);
      continue;
    }
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (r < 0)
      spdlog::warn("event=control_error job={} call={} function={} error={}", id_, call_id_,
                   function_, Quoted(std::strerror(errno)));
    // End of stream (or a broken channel): the exit callback ends the job.
    StopControl();
    return;
  }
}

void Job::HandleControl(const ControlMsg &msg) {
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
      spdlog::warn("event=control_unknown job={} call={} function={} kind={}", id_, call_id_,
                   function_, msg.kind);
  }
}

void Job::StopControl() {
  if (control_polling_) uv_poll_stop(&control_poll_);
  control_polling_ = false;
}

void Job::OnProcessExit(uv_process_t *process, int64_t exit_status, int term_signal) {
  auto *self = static_cast<Job *>(process->data);
  self->exited_ = true;
  self->exit_status_ = exit_status;
  self->term_signal_ = term_signal;
  // The exit may be seen before the last messages were read; they are all in
  // the socket already, since the executable wrote them before exiting.
  if (self->control_polling_) self->ReadControl();
  self->StopControl();
  self->events_->OnExit(*self);
}

std::string Job::ExitDescription() const {
  if (term_signal_) return "signal " + std::to_string(term_signal_);
  return "exit status " + std::to_string(exit_status_);
}

void Job::Close() {
  StopControl();
  if (control_open_) {
    ++closing_handles_;
    uv_close(reinterpret_cast<uv_handle_t *>(&control_poll_), OnHandleClosed);
  }
  if (process_open_) {
    ++closing_handles_;
    uv_close(reinterpret_cast<uv_handle_t *>(&process_), OnHandleClosed);
  }
  if (closing_handles_ == 0) {
    if (control_fd_ >= 0) ::close(control_fd_);
    delete this;
  }
}

void Job::OnHandleClosed(uv_handle_t *handle) {
  auto *self = static_cast<Job *>(handle->data);
  if (--self->closing_handles_ > 0) return;
  if (self->control_fd_ >= 0) ::close(self->control_fd_);
  delete self;
}

}  // namespace ninf::server
