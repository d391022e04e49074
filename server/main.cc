// ninfd: parse the settings, load the registry, build the loop, install the
// signals, run, clean up. Everything else lives in its own file.
#include <dirent.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "address.h"
#include "log.h"
#include "policy.h"
#include "registry.h"
#include "server.h"
#include "settings.h"
#include "status_tool.h"

namespace ninf::server {
namespace {

// Why ninfd cannot start is its own text (paths, remedies): logged whole.
constexpr std::size_t kStartupMessageLimit = 4096;

// Processors this process may run on (its CPU affinity), at least 1: under
// taskset or a cgroup cpuset the daemon must split only the cores it may use.
int CountCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// The daemon's signal handles, closed once the server has stopped so that
// the loop runs out of work and returns.
struct Signals {
  Server *server = nullptr;
  // Reads the settings again as at start (SIGHUP).
  std::function<Status(Settings *)> reread;
  uv_signal_t handles[3]{};
  int open = 0;  // handles[0..open) are initialized

  // Errors: NINF_ERR_SERVER naming the signal libuv refused.
  Status Start(uv_loop_t *loop, Server *s) {
    server = s;
    constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};
    for (int signum : kSignals) {
      uv_signal_t *handle = &handles[open];
      if (int rc = uv_signal_init(loop, handle); rc != 0)
        return Status(NINF_ERR_SERVER, std::string("cannot watch signals: ") + uv_strerror(rc));
      ++open;
      handle->data = this;
      if (int rc = uv_signal_start(handle, OnSignal, signum); rc != 0)
        return Status(NINF_ERR_SERVER, std::string("cannot watch signal ") + strsignal(signum) +
                                           ": " + uv_strerror(rc));
    }
    return Status::Ok();
  }

  void Close() {
    for (int i = 0; i < open; ++i)
      if (!uv_is_closing(reinterpret_cast<uv_handle_t *>(&handles[i])))
        uv_close(reinterpret_cast<uv_handle_t *>(&handles[i]), nullptr);
  }

  static void OnSignal(uv_signal_t *handle, int signum) {
    auto *self = static_cast<Signals *>(handle->data);
    if (signum == SIGHUP) {
      Settings fresh;
      if (Status st = self->reread(&fresh); st.ok())
        self->server->ReloadSettings(fresh);
      else  // a broken file keeps every running value
        spdlog::error("event=reload_failed settings=config error={}", Quoted(st.message()));
      self->server->ReloadRegistry();
      return;
    }
    spdlog::info("event=signal signal={}", signum == SIGTERM ? "TERM" : "INT");
    self->server->Shutdown([self] { self->Close(); });
  }
};

// Descriptors ninfd inherited from whoever started it (a shell, a test
// runner) must not reach the executables: they get fds 0-3 only.
void MarkInheritedFdsCloseOnExec() {
  if (::close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) == 0) return;
  // Kernels before 5.11: walk the open descriptors instead.
  if (DIR *dir = ::opendir("/proc/self/fd")) {
    int own = ::dirfd(dir);
    while (dirent *e = ::readdir(dir)) {
      int fd = std::atoi(e->d_name);
      if (fd > 2 && fd != own) ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
    }
    ::closedir(dir);
  }
}

// Every connection and job costs descriptors; ask for the hard limit so that
// max_connections is not capped by a low default soft limit.
void RaiseFdLimit(int64_t max_connections) {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  if (lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
  }
  // A connection with a running call holds its socket and a control socket.
  auto needed = static_cast<rlim_t>(2 * max_connections + 64);
  if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < needed)
    spdlog::warn("event=fd_limit limit={} max_connections={} needed={}", lim.rlim_cur,
                 max_connections, needed);
}

int RunStatus(const Invocation &inv) {
  return PrintStats("ninfd --status", inv.settings.listen, static_cast<int>(inv.settings.port),
                    inv.status_server, inv.settings.key_file);
}

int RunDaemon(Settings settings, std::function<Status(Settings *)> reread) {
  MarkInheritedFdsCloseOnExec();
  if (settings.registry.empty()) settings.registry = DefaultRegistryDir();
  Registry registry;
  std::vector<std::string> warnings;
  Status st = Registry::Load(settings.registry, &registry, &warnings);
  for (const std::string &w : warnings) spdlog::warn("event=registry_skip message={}", Quoted(w));
  if (!st.ok()) {
    spdlog::error("event=startup_failed error={}", Quoted(st.message(), kStartupMessageLimit));
    return 1;
  }
  if (registry.size() == 0)
    spdlog::warn("event=registry_empty registry={}", Quoted(settings.registry));
  RaiseFdLimit(settings.max_connections);
  // Writes to a vanished peer must fail with EPIPE, not kill the daemon.
  // (libuv restores default dispositions in the executables it spawns.)
  if (std::signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
    spdlog::error("event=startup_failed error={}", Quoted(std::strerror(errno)));
    return 1;
  }

  uv_loop_t loop;
  if (int rc = uv_loop_init(&loop); rc != 0) {
    spdlog::error("event=startup_failed error={}", Quoted(uv_strerror(rc)));
    return 1;
  }
  int exit_code = 0;
  {
    Server server(&loop, settings, std::move(registry), CountCores());
    Signals signals;
    signals.reread = [&reread](Settings *out) {
      NINF_RETURN_IF_ERROR(reread(out));
      if (out->registry.empty()) out->registry = DefaultRegistryDir();
      return Status::Ok();
    };
    st = signals.Start(&loop, &server);
    if (st.ok()) st = server.Start();
    if (!st.ok()) {
      spdlog::error("event=startup_failed error={}", Quoted(st.message(), kStartupMessageLimit));
      exit_code = 1;
      server.Shutdown([&signals] { signals.Close(); });
    }
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  if (uv_loop_close(&loop) != 0) {
    spdlog::error("event=loop_busy message=\"handles left open at exit\"");
    exit_code = exit_code ? exit_code : 1;
  }
  return exit_code;
}

}  // namespace
}  // namespace ninf::server

// A daemon started with stdin, stdout or stderr closed would hand those
// numbers to its first sockets, and then write its log into a client's
// connection. /dev/null fills any gap first.
void OpenStandardDescriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    int null = ::open("/dev/null", O_RDWR);
    if (null >= 0 && null != fd) {
      ::dup2(null, fd);
      ::close(null);
    }
  }
}

int main(int argc, char **argv) {
  using namespace ninf::server;
  using ninf::Status;
  OpenStandardDescriptors();
  Invocation inv;
  Status st = ParseInvocation(
      argc, argv, [](const char *name) { return std::getenv(name); }, &inv);
  if (!st.ok()) {
    std::fprintf(stderr, "ninfd: %s\nRun 'ninfd --help' for the settings.\n", st.message().c_str());
    return 2;
  }
  if (inv.exit_now) {
    std::fputs(inv.output.c_str(), stdout);
    return 0;
  }
  if (inv.status) return RunStatus(inv);
  if (inv.list)
    return PrintFunctions("ninfd --list", inv.settings.listen, static_cast<int>(inv.settings.port),
                          inv.status_server, inv.settings.key_file);
  if (st = SetupLogging(inv.settings.log_level); !st.ok()) {
    std::fprintf(stderr, "ninfd: %s\n", st.message().c_str());
    return 2;
  }
  // SIGHUP reads the same command line, environment and config file again.
  auto reread = [argc, argv](Settings *out) {
    Invocation again;
    NINF_RETURN_IF_ERROR(ParseInvocation(
        argc, argv, [](const char *name) { return std::getenv(name); }, &again));
    *out = std::move(again.settings);
    return Status::Ok();
  };
  return RunDaemon(inv.settings, reread);
}
