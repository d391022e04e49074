#include "daemon/daemon_main.h"

#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "daemon/descriptors.h"
#include "daemon/log.h"

namespace ninf::daemon {
namespace {

// The daemon's signal handles, closed once the service has stopped so that
// the loop runs out of work and returns.
struct Signals {
  Service *service = nullptr;
  uv_signal_t handles[3]{};
  int open = 0;  // handles[0..open) are initialized

  // Errors: NINF_ERR_SERVER naming the signal libuv refused.
  Status Start(uv_loop_t *loop, Service *s) {
    service = s;
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
    if (signum == SIGHUP) return self->service->Reload();
    spdlog::info("event=signal signal={}", signum == SIGTERM ? "TERM" : "INT");
    self->service->Shutdown([self] { self->Close(); });
  }
};

// Builds the service on `loop`, starts it and runs the loop to its end.
int Serve(uv_loop_t *loop, const std::function<std::unique_ptr<Service>(uv_loop_t *)> &make) {
  std::unique_ptr<Service> service = make(loop);
  if (!service) return 1;  // `make` said why
  Signals signals;
  Status st = signals.Start(loop, service.get());
  if (st.ok()) st = service->Start();
  int exit_code = 0;
  if (!st.ok()) {
    spdlog::error("event=startup_failed error={}", Quoted(st.message(), kStartupMessageLimit));
    // A configuration the daemon cannot start with (a key file others may
    // read, a certificate that cannot be loaded, an exposed address without
    // a key) exits 2 as a bad command line does: the systemd units do not
    // restart it (RestartPreventExitStatus=2). What may pass (a port in use)
    // exits 1.
    exit_code = st.code() == NINF_ERR_CONFIG ? 2 : 1;
    service->Shutdown([&signals] { signals.Close(); });
  }
  uv_run(loop, UV_RUN_DEFAULT);
  return exit_code;
}

}  // namespace

const char *ProcessVariable(const char *name) { return std::getenv(name); }

int CommandLineError(std::string_view program, const Status &st) {
  const std::string name(program);
  std::fprintf(stderr, "%s: %s\nRun '%s --help' for the settings.\n", name.c_str(),
               st.message().c_str(), name.c_str());
  return 2;
}

std::optional<int> StartLog(std::string_view program, const std::string &level) {
  if (Status st = SetupLogging(level); !st.ok()) {
    std::fprintf(stderr, "%s: %s\n", std::string(program).c_str(), st.message().c_str());
    return 2;
  }
  return std::nullopt;
}

int RunDaemon(const DaemonSpec &spec,
              const std::function<std::unique_ptr<Service>(uv_loop_t *)> &make) {
  MarkInheritedFdsCloseOnExec();
  RaiseFdLimit(spec.max_connections, spec.fds_per_connection);
  // Writes to a vanished peer must fail with EPIPE, not kill the daemon.
  // (libuv restores default dispositions in the programs it spawns.)
  if (std::signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
    spdlog::error("event=startup_failed error={}", Quoted(std::strerror(errno)));
    return 1;
  }
  uv_loop_t loop;
  if (int rc = uv_loop_init(&loop); rc != 0) {
    spdlog::error("event=startup_failed error={}", Quoted(uv_strerror(rc)));
    return 1;
  }
  int exit_code = Serve(&loop, make);
  if (uv_loop_close(&loop) != 0) {
    spdlog::error("event=loop_busy message=\"handles left open at exit\"");
    exit_code = exit_code ? exit_code : 1;
  }
  return exit_code;
}

}  // namespace ninf::daemon
