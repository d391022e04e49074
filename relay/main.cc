// ninf-relay: parse the settings, then run the RelayServer on the daemon
// layer's loop (daemon/daemon_main.h: descriptors, limits, signals).
// relay_server.h has the map; docs/relay.md the picture.
#include <functional>
#include <memory>

#include "daemon/daemon_main.h"
#include "daemon/log.h"
#include "relay/relay_server.h"
#include "relay/relay_settings.h"

namespace {

using ninf::Status;

// Reads the command line, environment and config file again.
using Reread = std::function<Status(ninf::relay::RelaySettings *)>;

// ninf-relay as the daemon layer runs it. SIGHUP applies the rows marked
// live (the log level) and reads the key file again (a key is rotated
// without dropping the bridges); other changed settings need a restart.
class RelayDaemon : public ninf::daemon::Service {
 public:
  RelayDaemon(uv_loop_t *loop, const ninf::relay::RelaySettings &settings, Reread reread)
      : server_(loop, settings), running_(settings), reread_(std::move(reread)) {}
  Status Start() override { return server_.Start(); }
  void Shutdown(std::function<void()> stopped) override { server_.Shutdown(std::move(stopped)); }
  void Reload() override {
    ninf::daemon::ReloadTableSettings("ninf-relay", ninf::relay::RelaySettingsTable(), reread_,
                                      &running_);
    server_.ReloadKeys();
  }

 private:
  ninf::relay::RelayServer server_;
  ninf::relay::RelaySettings running_;
  Reread reread_;
};

}  // namespace

int main(int argc, char **argv) {
  ninf::relay::RelayInvocation inv;
  if (auto exit_status = ninf::daemon::ReadCommandLine("ninf-relay", argc, argv,
                                                       ninf::relay::ParseRelayInvocation, &inv))
    return *exit_status;
  if (auto exit_status = ninf::daemon::StartLog("ninf-relay", inv.settings.log_level))
    return *exit_status;
  // ninfd's or the client's variable where ninf-relay's own is not set: not
  // read, and said once, so that a key file meant for the relay is not
  // dropped without a word.
  ninf::daemon::LogIgnoredVariables(inv.ignored_variables, "ninf-relay");
  // A connection holds its socket; a bridge two sockets and two pipes
  // (four descriptors), counted against max_connections twice over.
  const ninf::daemon::DaemonSpec spec{.max_connections = inv.settings.max_connections,
                                      .fds_per_connection = 4};
  // SIGHUP reads the same command line, environment and config file again.
  Reread reread = ninf::daemon::Rereader(argc, argv, ninf::relay::ParseRelayInvocation);
  return ninf::daemon::RunDaemon(spec, [&](uv_loop_t *loop) {
    return std::make_unique<RelayDaemon>(loop, inv.settings, reread);
  });
}
