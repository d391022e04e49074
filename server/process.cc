#include "server/process.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstring>
#include <vector>

#include "daemon/log.h"
#include "protocol/launch.h"
#include "server/launcher.h"

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
// A launched executable also gets its launcher's variables and its claim on
// the control channel (protocol/launch.h); nobody else inherits a claim.
// It claims over TCP (launch_address) when its rank 0 may run elsewhere.
std::vector<std::string> ExecutableEnvironment(const Launch &launch, const LaunchBroker *broker,
                                               const std::string &token) {
  const bool claims = !launch.direct() && broker;
  const bool tcp = claims && launch.over_tcp;
  const std::pair<const char *, const char *> own[] = {
      {"OPENBLAS_NUM_THREADS", "1"},
      {"OMP_NUM_THREADS", "1"},
      {"NINF_CALL_ID", nullptr},
      // A routine never offloads its LAPACK calls back to a server: with
      // libninf_offload inherited through LD_PRELOAD (docs/offload.md), a
      // remote dgesv would call dgesv remotely again, to this same server.
      {"NINF_OFFLOAD", "0"},
      {kLaunchSocketEnv, claims && !tcp ? broker->path().c_str() : nullptr},
      {kLaunchAddressEnv, tcp ? broker->tcp_address().c_str() : nullptr},
      {kLaunchTokenEnv, claims ? token.c_str() : nullptr},
  };
  std::vector<std::string> env;
  for (char **e = environ; e && *e; ++e) {
    bool replaced = false;
    for (const auto &[name, value] : own) {
      std::size_t len = std::strlen(name);
      if (std::strncmp(*e, name, len) == 0 && (*e)[len] == '=') replaced = true;
    }
    // The daemon's settings, not its inherited NINF_TLS_* (a client's),
    // decide the executable's TLS: an inherited one is dropped.
    if (std::strncmp(*e, "NINF_TLS_", 9) == 0) replaced = true;
    for (const auto &[name, value] : launch.env)
      if (std::strncmp(*e, name.c_str(), name.size()) == 0 && (*e)[name.size()] == '=')
        replaced = true;
    if (!replaced) env.emplace_back(*e);
  }
  for (const auto &[name, value] : own)
    if (value) env.push_back(std::string(name) + "=" + value);
  for (const auto &[name, value] : launch.env) env.push_back(name + "=" + value);
  return env;
}

// Starts `path` (null: args[0] looked up in PATH, a launcher) with `args`
// and `envp`, the control socket `control` as fd 3 (-1: none).
//
// posix_spawn, not uv_spawn: glibc's shares the daemon's memory until the
// exec (CLONE_VM | CLONE_VFORK) where libuv 1.44 forks, copying the page
// tables of the daemon (perf: 10% of ninfd's CPU in _Fork during a loop of
// cold calls). Its own process group and session: Ctrl-C on the daemon's
// terminal does not hit running calls (shutdown lets them finish), and
// Kill() reaches everything the executable started (mpirun and its ranks).
// Signals back to their defaults and unblocked; stdin from /dev/null;
// stdout and stderr the daemon's; the control socket as fd 3. dup2 onto
// the same number clears close-on-exec as well (glibc >= 2.29). Returns 0
// or an errno.
int SpawnPlain(const char *path, char *const *args, char *const *envp, int control, pid_t *pid) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  if (posix_spawn_file_actions_init(&actions) != 0) return ENOMEM;
  if (posix_spawnattr_init(&attr) != 0) {
    posix_spawn_file_actions_destroy(&actions);
    return ENOMEM;
  }
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  int rc = posix_spawnattr_setflags(
      &attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  if (rc == 0) rc = posix_spawnattr_setsigdefault(&attr, &all);
  if (rc == 0) rc = posix_spawnattr_setsigmask(&attr, &none);
  if (rc == 0) rc = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, 1, 1);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, 2, 2);
  if (rc == 0 && control >= 0) rc = posix_spawn_file_actions_adddup2(&actions, control, kControlFd);
  if (rc == 0)
    rc = path ? posix_spawn(pid, path, &actions, &attr, args, envp)
              : posix_spawnp(pid, args[0], &actions, &attr, args, envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc;
}

// SpawnPlain as `as`'s account (run_as): posix_spawn cannot change ids, so
// fork, set what SpawnPlain sets, then the groups, the group id and the
// user id (in that order: after setuid nothing else may change), then
// exec. Between fork and exec only async-signal-safe calls: the account was
// resolved at load (users.h RunAs). The child's errno comes back through a
// close-on-exec pipe: nothing read means the exec happened. Rare (run_as
// calls only), so fork's copy of the page tables is acceptable here.
int SpawnAs(const RunAs &as, const char *path, char *const *args, char *const *envp, int control,
            pid_t *pid) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return errno;
  const pid_t child = ::fork();
  if (child < 0) {
    const int err = errno;
    ::close(report[0]);
    ::close(report[1]);
    return err;
  }
  if (child == 0) {
    auto fail = [&](int err) {
      (void)!::write(report[1], &err, sizeof err);
      ::_exit(127);
    };
    if (::setsid() < 0) fail(errno);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) (void)::sigaction(sig, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    (void)::sigprocmask(SIG_SETMASK, &none, nullptr);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null < 0 || ::dup2(null, 0) < 0) fail(errno);
    if (::fcntl(1, F_SETFD, 0) < 0 || ::fcntl(2, F_SETFD, 0) < 0) fail(errno);
    if (control >= 0) {
      if (control != kControlFd && ::dup2(control, kControlFd) < 0) fail(errno);
      if (::fcntl(kControlFd, F_SETFD, 0) < 0) fail(errno);
    }
    if (::setgroups(as.groups.size(), as.groups.data()) != 0) fail(errno);
    if (::setgid(as.gid) != 0) fail(errno);
    if (::setuid(as.uid) != 0) fail(errno);
    if (path)
      ::execve(path, args, envp);
    else
      ::execvpe(args[0], args, envp);
    fail(errno);
  }
  ::close(report[1]);
  int err = 0;
  ssize_t n;
  while ((n = ::read(report[0], &err, sizeof err)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof err)) {  // it never ran: reap it here
    int status;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return err;
  }
  *pid = child;
  return 0;
}

// The argv/envp form of `strings`: pointers into them, then a null. The
// strings must outlive the result and not move.
std::vector<char *> PointersTo(std::vector<std::string> &strings) {
  std::vector<char *> pointers;
  for (std::string &s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

FileStamp StampOf(const std::string &path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          static_cast<uint64_t>(st.st_size),
          int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec};
}

Process::Process(uv_loop_t *loop, std::string function, std::string executable, Launch launch,
                 LaunchBroker *broker, ProcessOwner *owner)
    : loop_(loop),
      function_(std::move(function)),
      executable_(std::move(executable)),
      launch_(std::move(launch)),
      broker_(broker),
      owner_(owner) {}

Status Process::Spawn(uv_loop_t *loop, const std::string &function, const std::string &executable,
                      const Launch &launch, LaunchBroker *broker, ProcessOwner *owner,
                      Process **out) {
  *out = nullptr;
  auto *p =
      new Process(loop, function, executable, launch, launch.direct() ? nullptr : broker, owner);
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

Status Process::OpenControl(daemon::UniqueFd *child_end) {
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
  daemon::UniqueFd child_end;  // closed when Start returns: the child has its copy as fd 3
  NINF_RETURN_IF_ERROR(OpenControl(&child_end));
  NINF_RETURN_IF_ERROR(PrepareLaunch(&child_end));
  std::vector<std::string> env = ExecutableEnvironment(launch_, broker_, launch_token_);
  std::vector<char *> envp = PointersTo(env);
  std::vector<std::string> words = launch_.command;
  words.push_back(executable_);
  std::vector<char *> args = PointersTo(words);
  // Before the exec: a file replaced in between then looks stale, never fresh.
  stamp_ = StampOf(executable_);
  NINF_RETURN_IF_ERROR(SpawnExecutable(args.data(), envp.data(), child_end.get()));
  return WatchStarted();
}

Status Process::PrepareLaunch(daemon::UniqueFd *child_end) {
  if (!launch_.direct()) {  // the executable's rank 0 claims its end
    if (!broker_)
      return Status(NINF_ERR_EXECUTABLE, "cannot launch '" + function_ + "': no launch broker");
    launch_token_ = broker_->Expect(std::move(*child_end));
    if (launch_token_.empty())
      return Status(NINF_ERR_EXECUTABLE, "cannot launch '" + function_ + "': no random token");
  }
  if (launch_.over_tcp && broker_ && broker_->tcp_address().empty())
    return Status(NINF_ERR_EXECUTABLE,
                  "cannot launch '" + function_ + "': ninfd does not listen at launch_address");
  return Status::Ok();
}

Status Process::SpawnExecutable(char *const *args, char *const *envp, int control_fd) {
  // posix_spawn, not uv_spawn: glibc's shares the daemon's memory until the
  // exec (CLONE_VM | CLONE_VFORK) where libuv 1.44 forks, copying the page
  // tables of the daemon (perf: 10% of ninfd's CPU in _Fork during a loop of
  // cold calls). Its own process group and session: Ctrl-C on the daemon's
  // terminal does not hit running calls (shutdown lets them finish), and
  // Kill() reaches everything the executable started (mpirun and its ranks).
  // Signals back to their defaults and unblocked; stdin from /dev/null;
  // stdout and stderr the daemon's; the control socket as fd 3. dup2 onto
  // the same number clears close-on-exec as well (glibc >= 2.29).
  pid_t pid = 0;
  int rc = launch_.run_as.set()
               ? SpawnAs(launch_.run_as, launch_.direct() ? executable_.c_str() : nullptr, args,
                         envp, control_fd, &pid)
               : SpawnPlain(launch_.direct() ? executable_.c_str() : nullptr, args, envp,
                            control_fd, &pid);
  if (rc != 0)
    return Status(NINF_ERR_EXECUTABLE,
                  "cannot start the executable for '" + function_ + "' (" + args[0] +
                      (launch_.run_as.set() ? " as " + launch_.run_as.account : std::string()) +
                      "): " + std::strerror(rc));
  pid_ = pid;
  spawned_at_ = Clock::now();
  return Status::Ok();
}

Status Process::WatchStarted() {
  // Its exit: a pidfd turns readable (the child stays unreaped until
  // OnPidfdReadable, so the pid cannot be reused under us).
  Status watched = WatchExit();
  if (!watched.ok()) {
    // Unwatched it could never be reaped: kill it and wait for it here.
    (void)::kill(pid_, SIGKILL);
    int status;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    return watched;
  }
  if (int rc = uv_poll_start(&control_poll_, UV_READABLE, OnControlReadable); rc != 0) {
    // Unwatched, its calls could never complete. Killed, it is reaped by the
    // exit watch as usual, and a call handed to it ends with an error.
    spdlog::error("event=control_error function={} pid={} error={}", function_, pid_,
                  daemon::Quoted(uv_strerror(rc)));
    Kill();
    return Status::Ok();
  }
  control_polling_ = true;
  return Status::Ok();
}

Status Process::WatchExit() {
  // The system call itself: glibc 2.36's <sys/pidfd.h> lacks extern "C".
  pidfd_.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));
  if (!pidfd_.valid())
    return Status(NINF_ERR_EXECUTABLE,
                  std::string("cannot watch the executable (pidfd_open): ") + std::strerror(errno));
  if (int rc = uv_poll_init(loop_, &exit_poll_, pidfd_.get()); rc != 0)
    return Status(NINF_ERR_EXECUTABLE,
                  std::string("cannot watch the executable: ") + uv_strerror(rc));
  exit_poll_.data = this;
  exit_open_ = true;
  if (int rc = uv_poll_start(&exit_poll_, UV_READABLE, OnPidfdReadable); rc != 0)
    return Status(NINF_ERR_EXECUTABLE,
                  std::string("cannot watch the executable: ") + uv_strerror(rc));
  return Status::Ok();
}

int Process::Handoff(const ControlMsg &msg, int fd) {
  if (exited_) return ESRCH;
  return SendControl(control_fd_.get(), msg, fd) == 0 ? 0 : errno;
}

void Process::Kill() {
  // pid 0 would make kill(-pid) signal the daemon's own process group. Until
  // it is reaped (exited_), the pid is still this child's, even as a zombie.
  if (exited_ || pid_ <= 0) return;
  // srun alone: its helper process then cancels the step (the tasks die
  // within a moment), where killing srun's whole group leaves the step
  // running for good (measured: tests/slurm/README.md).
  if (launch_.slurm) {
    (void)::kill(pid_, SIGKILL);
    return;
  }
  // The group first (the executable's children), then the process itself in
  // case it has not reached setsid() yet.
  // ESRCH from either only means that part is gone already.
  (void)::kill(-pid_, SIGKILL);
  (void)::kill(pid_, SIGKILL);
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
    int attached = -1;
    int r = RecvControl(control_fd_.get(), &msg, &attached);
    if (r == 1) {
      owner_->OnControl(*this, msg, daemon::UniqueFd(attached));
      continue;
    }
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (r < 0)
      spdlog::warn("event=control_error function={} pid={} error={}", function_, pid_,
                   daemon::Quoted(std::strerror(errno)));
    // End of stream (or a broken channel): the exit callback follows.
    StopControl();
  }
}

void Process::StopControl() {
  if (control_polling_) (void)uv_poll_stop(&control_poll_);  // cannot fail on an open handle
  control_polling_ = false;
}

void Process::OnPidfdReadable(uv_poll_t *handle, int, int) {
  auto *self = static_cast<Process *>(handle->data);
  siginfo_t info{};
  if (::waitid(P_PIDFD, self->pidfd_.get(), &info, WEXITED | WNOHANG) != 0) {
    if (errno == EINTR) return;  // readable still: the loop comes back
    // ECHILD: reaped elsewhere, which nothing in ninfd does; treat as killed.
    info.si_pid = self->pid_;
    info.si_code = CLD_KILLED;
    info.si_status = SIGKILL;
  }
  if (info.si_pid == 0) return;  // not exited yet (a spurious wake-up)
  (void)uv_poll_stop(&self->exit_poll_);
  self->exited_ = true;
  if (self->broker_) self->broker_->Forget(self->launch_token_);  // if never claimed
  if (info.si_code == CLD_EXITED) {
    self->exit_status_ = info.si_status;
  } else {
    self->term_signal_ = info.si_status;
  }
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
  if (broker_) broker_->Forget(launch_token_);  // a spawn that failed after Expect
  StopControl();
  if (control_open_) {
    ++closing_handles_;
    uv_close(reinterpret_cast<uv_handle_t *>(&control_poll_), OnHandleClosed);
  }
  if (exit_open_) {
    ++closing_handles_;
    uv_close(reinterpret_cast<uv_handle_t *>(&exit_poll_), OnHandleClosed);
  }
  if (closing_handles_ == 0) delete this;  // control_fd_ and pidfd_ close with it
}

void Process::OnHandleClosed(uv_handle_t *handle) {
  auto *self = static_cast<Process *>(handle->data);
  if (--self->closing_handles_ > 0) return;
  delete self;  // control_fd_ and pidfd_ close with it
}

}  // namespace ninf::server
