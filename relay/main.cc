// ninf-relay: parse the settings, then run the RelayServer on the daemon
// layer's loop (daemon/daemon_main.h: descriptors, limits, signals).
// relay_server.h has the map; docs/relay.md the picture.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "daemon/daemon_main.h"
#include "daemon/descriptors.h"
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
    ninf::relay::RelaySettings fresh;
    if (Status st = reread_(&fresh); !st.ok()) {
      spdlog::error("event=reload_failed settings=config error={}",
                    ninf::daemon::Quoted(st.message()));
    } else {
      auto table = ninf::relay::RelaySettingsTable();
      std::vector<std::string> applied, restart;
      for (const std::string &key : ninf::daemon::ChangedSettingKeys(table, running_, fresh))
        (ninf::daemon::AppliesLiveIn(table, key) ? applied : restart).push_back(key);
      running_ = ninf::daemon::LiveSettingsOf(table, running_, fresh);
      spdlog::set_level(spdlog::level::from_str(running_.log_level));
      ninf::daemon::LogReload("ninf-relay", applied, restart);
    }
    server_.ReloadKeys();
  }

 private:
  ninf::relay::RelayServer server_;
  ninf::relay::RelaySettings running_;
  Reread reread_;
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
  // ninfd's or the client's variable where ninf-relay's own is not set: not
  // read, and said once, so that a key file meant for the relay is not
  // dropped without a word.
  ninf::daemon::LogIgnoredVariables(inv.ignored_variables, "ninf-relay");
  // A connection holds its socket; a bridge two sockets and two pipes
  // (four descriptors), counted against max_connections twice over.
  const ninf::daemon::DaemonSpec spec{.max_connections = inv.settings.max_connections,
                                      .fds_per_connection = 4};
  auto reread = [argc, argv](ninf::relay::RelaySettings *out) {
    ninf::relay::RelayInvocation again;
    NINF_RETURN_IF_ERROR(ninf::relay::ParseRelayInvocation(
        argc, argv, [](const char *name) { return std::getenv(name); }, &again));
    *out = again.settings;
    return Status::Ok();
  };
  return ninf::daemon::RunDaemon(spec, [&](uv_loop_t *loop) {
    return std::make_unique<RelayDaemon>(loop, inv.settings, reread);
  });
}
