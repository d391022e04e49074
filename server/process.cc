#include "process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstring>
#include <vector>

#include "log.h"

extern char **environ;

namespace ninf::server {
namespace {

// The daemon's environment with the executable's own variables put in place
// of any inherited ones. NINF_CALL_ID is removed, not set: a warm executable
// is started before its call exists, and a variable that only cold starts
// had would be a trap. The call id arrives in CTL_HANDOFF. So does the
// call's thread budget, which the stub runtime applies through the
// libraries' own calls; until then the process is single-threaded, so that
// starting one (OpenBLAS spins its thread pool up at load time) takes no
// more than one core from the calls running meanwhile.
std::vector<std::string> ExecutableEnvironment() {
  const std::pair<const char *, const char *> own[] = {
      {"OPENBLAS_NUM_THREADS", "1"},
      {"OMP_NUM_THREADS", "1"},
      {"NINF_CALL_ID", nullptr},
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
  for (const auto &[name, value] : own)
    if (value) env.push_back(std::string(name) + "=" + value);
  return env;
}

}  // namespace

FileStamp StampOf(const std::string &path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          static_cast<uint64_t>(st.st_size),
          int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec};
}

Process::Process(uv_loop_t *loop, std::string function, std::string executable, ProcessOwner *owner)
    : loop_(loop),
      function_(std::move(function)),
      executable_(std::move(executable)),
      owner_(owner) {}

Status Process::Spawn(uv_loop_t *loop, const std::string &function, const std::string &executable,
                      ProcessOwner *owner, Process **out) {
  *out = nullptr;
  auto *p = new Process(loop, function, executable, owner);
  Status st = p->Start();
  if (!st.ok()) {
    // Nothing runs: closing the handles (and deleting p) is all there is.
    p->exited_ = true;
    p->Close();
    return st;
  }
  *out = p;
  return Status::Ok();
}

Status Process::OpenControl(UniqueFd *child_end) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return Status(NINF_ERR_EXECUTABLE,
                  std::string("cannot create the control channel: ") + std::strerror(errno));
  control_fd_.reset(sv[0]);
  child_end->reset(sv[1]);
  // Only our end is non-blocking: the executable blocks on its end.
  const int flags = ::fcntl(control_fd_.get(), F_GETFL);
  if (flags < 0 || ::fcntl(control_fd_.get(), F_SETFL, flags | O_NONBLOCK) < 0)
    return Status(NINF_ERR_EXECUTABLE,
                  std::string("cannot set up the control channel: ") + std::strerror(errno));
  if (int rc = uv_poll_init(loop_, &control_poll_, control_fd_.get()); rc != 0)
    return Status(NINF_ERR_EXECUTABLE,
                  std::string("cannot watch the control channel: ") + uv_strerror(rc));
  control_poll_.data = this;
  control_open_ = true;
  return Status::Ok();
}

Status Process::Start() {
  UniqueFd child_end;  // closed when Start returns: the child has its copy as fd 3
  NINF_RETURN_IF_ERROR(OpenControl(&child_end));
  std::vector<std::string> env = ExecutableEnvironment();
  std::vector<char *> envp;
  for (std::string &e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  char *args[] = {executable_.data(), nullptr};
  // Before the exec: a file replaced in between then looks stale, never fresh.
  stamp_ = StampOf(executable_);

  uv_stdio_container_t stdio[4];
  stdio[0].flags = UV_IGNORE;
  stdio[1].flags = UV_INHERIT_FD;
  stdio[1].data.fd = 1;
  stdio[2].flags = UV_INHERIT_FD;
  stdio[2].data.fd = 2;
  stdio[kControlFd].flags = UV_INHERIT_FD;
  stdio[kControlFd].data.fd = child_end.get();

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

  int rc = uv_spawn(loop_, &process_, &options);
  process_.data = this;
  process_open_ = true;
  if (rc != 0)
    return Status(NINF_ERR_EXECUTABLE, "cannot start the executable for '" + function_ + "' (" +
                                           executable_ + "): " + uv_strerror(rc));
  spawned_at_ = Clock::now();
  if (int rc = uv_poll_start(&control_poll_, UV_READABLE, OnControlReadable); rc != 0) {
    // Unwatched, its calls could never complete. Killed, it is reaped by the
    // exit callback as usual, and a call handed to it ends with an error.
    spdlog::error("event=control_error function={} pid={} error={}", function_, process_.pid,
                  Quoted(uv_strerror(rc)));
    Kill();
    return Status::Ok();
  }
  control_polling_ = true;
  return Status::Ok();
}

int Process::Handoff(const ControlMsg &msg, int fd) {
  if (exited_) return ESRCH;
  return SendControl(control_fd_.get(), msg, fd) == 0 ? 0 : errno;
}

void Process::Kill() {
  // pid 0 would make kill(-pid) signal the daemon's own process group.
  if (exited_ || !process_open_ || process_.pid <= 0) return;
  // The group first (the executable's children), then the process itself in
  // case it has not reached setsid() yet.
  // ESRCH from either only means that part is gone already.
  (void)::kill(-process_.pid, SIGKILL);
  (void)uv_process_kill(&process_, SIGKILL);
}

void Process::OnControlReadable(uv_poll_t *handle, int status, int) {
  auto *self = static_cast<Process *>(handle->data);
  if (status < 0) {
    self->StopControl();
    return;
  }
  self->ReadControl();
}

void Process::ReadControl() {
  while (control_polling_) {
    ControlMsg msg;
    int r = RecvControl(control_fd_.get(), &msg, nullptr);
    if (r == 1) {
      owner_->OnControl(*this, msg);
      continue;
    }
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (r < 0)
      spdlog::warn("event=control_error function={} pid={} error={}", function_, process_.pid,
                   Quoted(std::strerror(errno)));
    // End of stream (or a broken channel): the exit callback follows.
    StopControl();
  }
}

void Process::StopControl() {
  if (control_polling_) (void)uv_poll_stop(&control_poll_);  // cannot fail on an open handle
  control_polling_ = false;
}

void Process::OnProcessExit(uv_process_t *process, int64_t exit_status, int term_signal) {
  auto *self = static_cast<Process *>(process->data);
  self->exited_ = true;
  self->exit_status_ = exit_status;
  self->term_signal_ = term_signal;
  // The exit may be seen before the last messages were read; they are all in
  // the socket already, since the executable wrote them before exiting.
  if (self->control_polling_) self->ReadControl();
  self->StopControl();
  self->owner_->OnExit(*self);  // may Close() (and so free) self
}

std::string Process::ExitDescription() const {
  if (term_signal_) return "signal " + std::to_string(term_signal_);
  return "exit status " + std::to_string(exit_status_);
}

void Process::Close() {
  assert(exited_);
  StopControl();
  if (control_open_) {
    ++closing_handles_;
    uv_close(reinterpret_cast<uv_handle_t *>(&control_poll_), OnHandleClosed);
  }
  if (process_open_) {
    ++closing_handles_;
    uv_close(reinterpret_cast<uv_handle_t *>(&process_), OnHandleClosed);
  }
  if (closing_handles_ == 0) delete this;  // control_fd_ closes with it
}

void Process::OnHandleClosed(uv_handle_t *handle) {
  auto *self = static_cast<Process *>(handle->data);
  if (--self->closing_handles_ > 0) return;
  delete self;  // control_fd_ closes with it
}

}  // namespace ninf::server
