// ninf-meta: parse the settings, build the loop, watch SIGTERM/SIGINT (stop)
// and SIGHUP (reread the settings), run.
// Everything else lives in its own file (meta_server.h has the map).
#include <uv.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "log.h"
#include "meta_server.h"
#include "meta_settings.h"
#include "status_tool.h"

namespace {

using ninf::Status;
using ninf::meta::MetaServer;
using ninf::server::Quoted;

// Reads the command line, environment and config file again.
using Reread = std::function<Status(ninf::meta::MetaSettings *)>;

struct Signals {
  MetaServer *server = nullptr;
  Reread reread;
  ninf::meta::MetaSettings running;
  uv_signal_t handles[3]{};
  int open = 0;

  Status Start(uv_loop_t *loop, MetaServer *s) {
    server = s;
    for (int signum : {SIGTERM, SIGINT, SIGHUP}) {
      if (int rc = uv_signal_init(loop, &handles[open]); rc != 0)
        return Status(NINF_ERR_SERVER, std::string("cannot watch signals: ") + uv_strerror(rc));
      handles[open].data = this;
      if (int rc = uv_signal_start(&handles[open++], OnSignal, signum); rc != 0)
        return Status(NINF_ERR_SERVER, std::string("cannot watch signals: ") + uv_strerror(rc));
    }
    return Status::Ok();
  }
  void Close() {
    for (int i = 0; i < open; ++i)
      if (!uv_is_closing(reinterpret_cast<uv_handle_t *>(&handles[i])))
        uv_close(reinterpret_cast<uv_handle_t *>(&handles[i]), nullptr);
  }
  // SIGHUP: the log level changes at once; any other changed key is
  // reported and keeps its running value (the server, its sockets and its
  // forecasts were built from them). A broken file changes nothing.
  void Reload() {
    ninf::meta::MetaSettings fresh;
    if (Status st = reread(&fresh); !st.ok()) {
      spdlog::error("event=reload_failed settings=config error={}", Quoted(st.message()));
      return;
    }
    std::string applied = "-", restart;
    for (const std::string &key : ninf::meta::ChangedMetaSettings(running, fresh)) {
      if (key == "log_level") {
        running.log_level = fresh.log_level;
        spdlog::set_level(spdlog::level::from_str(fresh.log_level));
        applied = key;
      } else {
        restart += (restart.empty() ? "" : ",") + key;
      }
    }
    spdlog::info("event=settings_reloaded applied={}", Quoted(applied));
    if (!restart.empty())
      spdlog::warn("event=settings_need_restart keys={} message={}", Quoted(restart),
                   Quoted("these keys changed but keep their running values until ninf-meta "
                          "restarts"));
  }
  static void OnSignal(uv_signal_t *handle, int signum) {
    auto *self = static_cast<Signals *>(handle->data);
    if (signum == SIGHUP) return self->Reload();
    spdlog::info("event=signal signal={}", signum == SIGTERM ? "TERM" : "INT");
    self->server->Shutdown([self] { self->Close(); });
  }
};

int RunDaemon(const ninf::meta::MetaSettings &settings, Reread reread) {
  std::signal(SIGPIPE, SIG_IGN);  // a vanished peer gives EPIPE, not death
  uv_loop_t loop;
  if (int rc = uv_loop_init(&loop); rc != 0) {
    spdlog::error("event=startup_failed error={}", Quoted(uv_strerror(rc)));
    return 1;
  }
  int exit_code = 0;
  {
    MetaServer server(&loop, settings);
    Signals signals;
    signals.reread = std::move(reread);
    signals.running = settings;
    Status st = signals.Start(&loop, &server);
    if (st.ok()) st = server.Start();
    if (!st.ok()) {
      spdlog::error("event=startup_failed error={}", Quoted(st.message(), 4096));
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

int main(int argc, char **argv) {
  ninf::meta::MetaInvocation inv;
  Status st = ninf::meta::ParseMetaInvocation(
      argc, argv, [](const char *name) { return std::getenv(name); }, &inv);
  if (!st.ok()) {
    std::fprintf(stderr, "ninf-meta: %s\nRun 'ninf-meta --help' for the settings.\n",
                 st.message().c_str());
    return 2;
  }
  if (inv.exit_now) {
    std::fputs(inv.output.c_str(), stdout);
    return 0;
  }
  if (inv.view == "functions")
    return ninf::server::PrintFunctions("ninf-meta --list", inv.settings.listen,
                                        static_cast<int>(inv.settings.port), inv.status_server,
                                        inv.settings.key_file);
  if (!inv.view.empty())
    return ninf::server::PrintStats("ninf-meta", inv.settings.listen,
                                    static_cast<int>(inv.settings.port), inv.status_server,
                                    inv.settings.key_file, inv.view == "stats" ? "" : inv.view);
  if (st = ninf::server::SetupLogging(inv.settings.log_level); !st.ok()) {
    std::fprintf(stderr, "ninf-meta: %s\n", st.message().c_str());
    return 2;
  }
  // SIGHUP reads the same command line, environment and config file again.
  auto reread = [argc, argv](ninf::meta::MetaSettings *out) {
    ninf::meta::MetaInvocation again;
    NINF_RETURN_IF_ERROR(ninf::meta::ParseMetaInvocation(
        argc, argv, [](const char *name) { return std::getenv(name); }, &again));
    *out = again.settings;
    return Status::Ok();
  };
  return RunDaemon(inv.settings, reread);
}
