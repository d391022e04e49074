// ninf-relay: parse the settings, then run the RelayServer on the daemon
// layer's loop (daemon/daemon_main.h: descriptors, limits, signals).
// relay_server.h has the map; docs/relay.md the picture.
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "daemon/daemon_main.h"
#include "daemon/descriptors.h"
#include "daemon/log.h"
#include "relay/relay_server.h"
#include "relay/relay_settings.h"

namespace {

using ninf::Status;

// ninf-relay as the daemon layer runs it. SIGHUP reads the key file again
// (a key is rotated without dropping the bridges); other settings need a
// restart.
class RelayDaemon : public ninf::daemon::Service {
 public:
  RelayDaemon(uv_loop_t *loop, const ninf::relay::RelaySettings &settings)
      : server_(loop, settings) {}
  Status Start() override { return server_.Start(); }
  void Shutdown(std::function<void()> stopped) override { server_.Shutdown(std::move(stopped)); }
  void Reload() override { server_.ReloadKeys(); }

 private:
  ninf::relay::RelayServer server_;
};

}  // namespace

int main(int argc, char **argv) {
  ninf::daemon::OpenStandardDescriptors();
  ninf::relay::RelayInvocation inv;
  Status st = ninf::relay::ParseRelayInvocation(
      argc, argv, [](const char *name) { return std::getenv(name); }, &inv);
  if (!st.ok()) {
    std::fprintf(stderr, "ninf-relay: %s\nRun 'ninf-relay --help' for the settings.\n",
                 st.message().c_str());
    return 2;
  }
  if (inv.exit_now) {
    std::fputs(inv.output.c_str(), stdout);
    return 0;
  }
  if (st = ninf::daemon::SetupLogging(inv.settings.log_level); !st.ok()) {
    std::fprintf(stderr, "ninf-relay: %s\n", st.message().c_str());
    return 2;
  }
  // A connection holds its socket; a bridge two sockets and two pipes
  // (four descriptors), counted against max_connections twice over.
  const ninf::daemon::DaemonSpec spec{.max_connections = inv.settings.max_connections,
                                      .fds_per_connection = 4};
  return ninf::daemon::RunDaemon(spec, [&](uv_loop_t *loop) {
    return std::make_unique<RelayDaemon>(loop, inv.settings);
  });
}
