#include "relay/relay_settings.h"

#include "daemon/common_settings.h"
#include "protocol/install_paths.h"

#ifndef NINF_VERSION
#define NINF_VERSION "unknown"
#endif

namespace ninf::relay {
namespace {

using daemon::SettingKind;

const RelaySettingSpec kTable[] = {
    daemon::PortRow<RelaySettings>(kRelayPortText),
    daemon::ListenRow<RelaySettings>(),
    {"key_file", SettingKind::kString, "", 0, 0,
     "file of shared keys (one per line, mode 0600) that reverse servers must prove they hold "
     "before they register (docs/relay.md); \"\": none (loopback only, unless insecure)",
     &RelaySettings::key_file},
    {"insecure", SettingKind::kBool, "false", 0, 0,
     "serve a non-loopback listen address without a key_file: anyone who reaches the port may "
     "register a server under any name",
     &RelaySettings::insecure},
    {"max_connections", SettingKind::kInteger, "1024", 1, 1 << 20,
     "open connections not yet bridged: servers' control connections, clients waiting for "
     "their server, dial-backs",
     &RelaySettings::max_connections},
    daemon::MaxConnectionsPerClientRow<RelaySettings>(),
    {"max_servers", SettingKind::kInteger, "256", 1, 1 << 16,
     "reverse servers registered at once; a new name over it is refused",
     &RelaySettings::max_servers},
    {"max_pending_dials", SettingKind::kInteger, "16", 1, 4096,
     "clients of one server waiting for its dial-back at once; more are refused",
     &RelaySettings::max_pending_dials},
    {"max_bridges_per_server", SettingKind::kInteger, "256", 1, 1 << 16,
     "bridged connections of one server at once; more are refused",
     &RelaySettings::max_bridges_per_server},
    {"dial_timeout_seconds", SettingKind::kInteger, "10", 1, 600,
     "a server must dial back within this long of being asked, else the client is told so",
     &RelaySettings::dial_timeout_seconds},
    {"idle_timeout_seconds", SettingKind::kInteger, "60", 2, 86400,
     "a control connection that sends nothing for this long is dropped (servers re-register "
     "every third of it)",
     &RelaySettings::idle_timeout_seconds},
    daemon::RequestTimeoutRow<RelaySettings>(),
    daemon::LogLevelRow<RelaySettings>(),
    daemon::ReadyFileRow<RelaySettings>(),
};

}  // namespace

std::span<const RelaySettingSpec> RelaySettingsTable() { return kTable; }

Status ParseRelayInvocation(int argc, const char *const *argv, const daemon::EnvLookup &env,
                            RelayInvocation *out) {
  CLI::App app(
      "ninf-relay: the relay for servers behind firewalls. A reverse ninfd (ninfd --reverse "
      "--relay HOST:PORT) keeps a connection out to it; clients call NAME@HOST:PORT and the "
      "relay joins them to that server's dialed-back connection, moving bytes end to end.\n"
      "Every setting is also read from the environment variable NINF_<NAME> and from the "
      "--config file (TOML); flags win over the environment, which wins over the file.",
      "ninf-relay");
  daemon::CommandLine cl;
  cl.version_text = std::string("ninf-relay ") + NINF_VERSION + "\n";
  cl.default_config_file = InstalledConfigFile("ninf-relay.toml");
  RelayInvocation inv;
  NINF_RETURN_IF_ERROR(daemon::ParseCommandLine<RelaySettings>(app, kTable, argc, argv, env,
                                                               nullptr, &cl, &inv.settings));
  inv.config_file = cl.config_file;
  inv.exit_now = cl.exit_now;
  inv.output = cl.output;
  *out = std::move(inv);
  return Status::Ok();
}

}  // namespace ninf::relay
