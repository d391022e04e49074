// One daemon's life, shared by ninfd and ninf-meta: descriptors and limits,
// the loop, the signals (SIGTERM/SIGINT stop, a second one stops at once;
// SIGHUP reloads), the start-up error path and the exit status. A daemon's
// main() parses its settings, then hands RunDaemon a way to build its
// Service on the loop. Builds on libuv, spdlog and daemon/descriptors.h.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "protocol/status.h"

namespace ninf::daemon {

// What a daemon runs on the shared loop. All calls come on the loop's thread.
class Service {
 public:
  virtual ~Service() = default;
  // Binds and starts serving. An error is why the daemon cannot start: it
  // is logged (event=startup_failed) and the daemon exits with status 1.
  virtual Status Start() = 0;
  // Stops serving; `stopped` runs once nothing is left to do. A second call
  // stops at once.
  virtual void Shutdown(std::function<void()> stopped) = 0;
  // SIGHUP: reads the settings again and applies what applies live.
  virtual void Reload() = 0;
};

struct DaemonSpec {
  int64_t max_connections = 0;  // for the descriptor limit (RaiseFdLimit)
  int fds_per_connection = 1;
};

// Marks inherited descriptors close-on-exec, raises the descriptor limit,
// ignores SIGPIPE (a vanished peer gives EPIPE), builds the Service with
// `make` on a new loop, watches the signals and runs the loop until the
// service has stopped. Returns the process's exit status: 0, or 1 when the
// loop or the service could not start or handles were left open.
int RunDaemon(const DaemonSpec &spec,
              const std::function<std::unique_ptr<Service>(uv_loop_t *)> &make);

// How long a start-up error may be when logged: its own text (paths,
// remedies) is logged whole.
inline constexpr std::size_t kStartupMessageLimit = 4096;

}  // namespace ninf::daemon
