// ninf-meta: parse the settings, then run the MetaServer on the daemon
// layer's loop (daemon/daemon_main.h: descriptors, limits, signals; SIGHUP
// rereads the settings). Everything else lives in its own file
// (meta_server.h has the map).
#include <uv.h>

#include <cstdio>
#include <functional>
#include <memory>

#include "daemon/daemon_main.h"
#include "daemon/log.h"
#include "daemon/status_tool.h"
#include "metaserver/meta_server.h"
#include "metaserver/meta_settings.h"

namespace {

using ninf::Status;
using ninf::daemon::Quoted;
using ninf::meta::MetaServer;
using ninf::meta::MetaSettings;

// Reads the command line, environment and config file again.
using Reread = std::function<Status(MetaSettings *)>;

// ninf-meta as the daemon layer runs it. SIGHUP: the rows marked live in
// the table (the log level) change at once; any other changed key is
// reported and keeps its running value (the server, its sockets and its
// forecasts were built from them). A broken file changes nothing.
class MetaDaemon : public ninf::daemon::Service {
 public:
  MetaDaemon(uv_loop_t *loop, const MetaSettings &settings, Reread reread)
      : server_(loop, settings), running_(settings), reread_(std::move(reread)) {}

  Status Start() override { return server_.Start(); }
  void Shutdown(std::function<void()> stopped) override { server_.Shutdown(std::move(stopped)); }
  void Reload() override {
    // The TLS files are read again (a renewed certificate keeps its path);
    // a failure keeps the ones in use.
    auto reload_tls = [this](const MetaSettings &previous) {
      if (Status st = server_.LoadTls(running_); !st.ok()) {
        spdlog::error("event=reload_failed settings=tls error={}", Quoted(st.message()));
        running_.tls_cert = previous.tls_cert;
        running_.tls_key = previous.tls_key;
        running_.tls_client_ca = previous.tls_client_ca;
      }
    };
    ninf::daemon::ReloadTableSettings("ninf-meta", ninf::meta::MetaSettingsTable(), reread_,
                                      &running_, reload_tls);
  }

 private:
  MetaServer server_;
  MetaSettings running_;
  Reread reread_;
};

}  // namespace

int main(int argc, char **argv) {
  ninf::meta::MetaInvocation inv;
  if (auto exit_status = ninf::daemon::ReadCommandLine("ninf-meta", argc, argv,
                                                       ninf::meta::ParseMetaInvocation, &inv))
    return *exit_status;
  // ninfd's or the client's variable where ninf-meta's own is not set: not
  // read, and said once (a tool command on stderr, the daemon in its log),
  // so that a key file meant for ninf-meta is not dropped without a word.
  const bool tool = !inv.view.empty();
  if (tool)
    for (const ninf::daemon::ForeignVariable &v : inv.ignored_variables)
      std::fprintf(stderr, "ninf-meta: warning: %s\n",
                   ninf::daemon::ForeignVariableWarning(v, "ninf-meta").c_str());
  if (inv.view == "functions")
    return ninf::daemon::PrintFunctions("ninf-meta --list", inv.settings.listen,
                                        static_cast<int>(inv.settings.port), inv.status_server,
                                        inv.settings.key_file);
  if (tool)
    return ninf::daemon::PrintStats("ninf-meta", inv.settings.listen,
                                    static_cast<int>(inv.settings.port), inv.status_server,
                                    inv.settings.key_file, inv.view == "stats" ? "" : inv.view);
  if (auto exit_status = ninf::daemon::StartLog("ninf-meta", inv.settings.log_level))
    return *exit_status;
  ninf::daemon::LogIgnoredVariables(inv.ignored_variables, "ninf-meta");
  // SIGHUP reads the same command line, environment and config file again.
  Reread reread = ninf::daemon::Rereader(argc, argv, ninf::meta::ParseMetaInvocation);
  // A connection holds its socket alone.
  const ninf::daemon::DaemonSpec spec{.max_connections = inv.settings.max_connections,
                                      .fds_per_connection = 1};
  return ninf::daemon::RunDaemon(spec, [&](uv_loop_t *loop) {
    return std::make_unique<MetaDaemon>(loop, inv.settings, reread);
  });
}
