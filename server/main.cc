// ninfd: parse the settings, then run the Server on the daemon layer's loop
// (daemon/daemon_main.h: descriptors, limits, signals, reload). Everything
// else lives in its own file.
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "daemon/daemon_main.h"
#include "daemon/log.h"
#include "daemon/status_tool.h"
#include "server/blas_core.h"
#include "server/registry.h"
#include "server/server.h"
#include "server/settings.h"

namespace ninf::server {
namespace {

// Processors this process may run on (its CPU affinity), at least 1: under
// taskset or a cgroup cpuset the daemon must split only the cores it may use.
int CountCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// The OpenBLAS kernels of the executables (server/blas_core.h): the
// administrator's OPENBLAS_CORETYPE, else the library's own pick unless it
// is below what this CPU runs.
struct BlasChoice {
  std::string core;      // what the executables run ("" = unknown)
  std::string source;    // environment, openblas or cpu
  std::string detected;  // the library's own pick
};

BlasChoice ExecutableBlasCore() {
  if (const char *set = std::getenv("OPENBLAS_CORETYPE")) return {set, "environment", ""};
  const std::string detected = DetectedOpenblasCore();
  const std::string better = PreferredOpenblasCore(detected, HostIsa());
  if (better.empty()) return {detected, "openblas", detected};
  return {better, "cpu", detected};
}

// Puts the choice in the daemon's environment, which every executable
// inherits, and logs it either way, so that a slow routine can be told
// from a slow kernel.
void ChooseExecutableBlasCore() {
  const BlasChoice c = ExecutableBlasCore();
  const std::string core = c.core.empty() ? "unknown" : c.core;
  if (c.source != "cpu") {
    spdlog::info("event=openblas_core executables={} source={}", daemon::Quoted(core), c.source);
    return;
  }
  ::setenv("OPENBLAS_CORETYPE", c.core.c_str(), 1);
  spdlog::info("event=openblas_core executables={} source=cpu detected={} message={}", core,
               daemon::Quoted(c.detected),
               daemon::Quoted("OpenBLAS does not know this CPU and fell back to " + c.detected +
                              "; set OPENBLAS_CORETYPE for ninfd to choose otherwise"));
}

// Reads the command line, environment and config file again (SIGHUP).
using Reread = std::function<Status(Settings *)>;

// ninfd as the daemon layer runs it: SIGHUP rereads the settings (the live
// ones apply, Server::ReloadSettings) and rescans the registry.
class Ninfd : public daemon::Service {
 public:
  Ninfd(uv_loop_t *loop, const Settings &settings, Registry registry, Reread reread)
      : server_(loop, settings, std::move(registry), CountCores()), reread_(std::move(reread)) {}

  Status Start() override { return server_.Start(); }
  void Shutdown(std::function<void()> stopped) override { server_.Shutdown(std::move(stopped)); }
  void Reload() override {
    Settings fresh;
    if (Status st = reread_(&fresh); st.ok())
      server_.ReloadSettings(fresh);
    else  // a broken file keeps every running value
      daemon::LogRereadFailed(st);
    server_.ReloadRegistry();
  }

 private:
  Server server_;
  Reread reread_;
};

// Loads the registry; null (the reason logged) when ninfd cannot start.
std::unique_ptr<daemon::Service> MakeNinfd(uv_loop_t *loop, const Settings &settings,
                                           Reread reread) {
  Registry registry;
  std::vector<std::string> warnings;
  std::vector<RegistryOverride> overrides;
  const std::string stdlib = DefaultRegistryDir();
  const std::vector<std::string> folders = RegistryFolders(settings.registry, stdlib);
  // `--registry DIR` alone serves DIR only: say so, since a user who meant
  // to add DIR finds dgesv gone (issue 31).
  if (std::find(folders.begin(), folders.end(), stdlib) == folders.end())
    spdlog::info("event=registry_without_stdlib message={}",
                 daemon::Quoted("the standard library (" + stdlib +
                                ") is not served: list 'stdlib' in registry to serve it too"));
  Status st = Registry::Load(folders, &registry, &warnings, &overrides);
  for (const std::string &w : warnings)
    spdlog::warn("event=registry_skip message={}", daemon::Quoted(w));
  LogOverrides(overrides);
  if (!st.ok()) {
    spdlog::error("event=startup_failed error={}",
                  daemon::Quoted(st.message(), daemon::kStartupMessageLimit));
    return nullptr;
  }
  if (registry.size() == 0)
    spdlog::warn("event=registry_empty registry={}", daemon::Quoted(registry.dir()));
  return std::make_unique<Ninfd>(loop, settings, std::move(registry), std::move(reread));
}

}  // namespace
}  // namespace ninf::server

int main(int argc, char **argv) {
  using namespace ninf::server;
  namespace daemon = ninf::daemon;
  Invocation inv;
  if (auto exit_status = daemon::ReadCommandLine("ninfd", argc, argv, ParseInvocation, &inv))
    return *exit_status;
  const Settings &s = inv.settings;
  const int port = static_cast<int>(s.port);
  // The tools reach ninfd as the TLS connections ninfd makes itself do
  // (tls_ca, showing tls_cert), with its key.
  const daemon::ToolAccess access{.key_file = s.key_file,
                                  .tls = {.ca = s.tls_ca, .cert = s.tls_cert, .key = s.tls_key}};
  if (inv.status)
    return daemon::PrintStats("ninfd --status", s.listen, port, inv.status_server, access);
  if (inv.list)
    return daemon::PrintFunctions("ninfd --list", s.listen, port, inv.status_server, access);
  if (inv.openblas_core) {
    const BlasChoice c = ExecutableBlasCore();
    if (c.core.empty()) {
      std::fputs("ninfd: OpenBLAS (libopenblas.so.0) could not be loaded\n", stderr);
      return 1;
    }
    std::printf("%s\n", c.core.c_str());
    return 0;
  }
  if (auto exit_status = daemon::StartLog("ninfd", s.log_level)) return *exit_status;
  ChooseExecutableBlasCore();
  // SIGHUP reads the same command line, environment and config file again.
  Reread reread = daemon::Rereader(argc, argv, ParseInvocation);
  const Settings &settings = inv.settings;
  // A connection with a running call holds its socket and a control socket.
  const daemon::DaemonSpec spec{.max_connections = settings.max_connections,
                                .fds_per_connection = 2};
  return daemon::RunDaemon(spec,
                           [&](uv_loop_t *loop) { return MakeNinfd(loop, settings, reread); });
}
