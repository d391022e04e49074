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
    daemon::TlsCertRow<RelaySettings>(),
    daemon::TlsKeyRow<RelaySettings>(),
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

constexpr const char *kNinfdVar = "ninfd's";
constexpr const char *kNinfdAndClientVar = "ninfd's and the client's";
// ninf-relay read NINF_<NAME> for its own settings before NINF_RELAY_<NAME>:
// an old EnvironmentFile must not change a bound without a word.
constexpr const char *kOldRelay = "an earlier ninf-relay's";

// ninfd's (and the client's) variables for the settings ninf-relay has too,
// and the names an earlier ninf-relay read for its own settings, each beside
// ninf-relay's own: the one list of these pairs. ninf-relay reads none of
// them and warns of one set while its own and its flag are not
// (daemon::ForeignVariable says why); --help lists them, and docs/relay.md
// and ninf-relay(8) list the same. A reverse ninfd and its relay often
// share a shell or an EnvironmentFile: NINF_READY_FILE meant for ninfd once
// received the relay's port. The client reads NINF_KEY_FILE
// (client/options.cc).
const daemon::ForeignVariable kForeignVariables[] = {
    {"NINF_CONFIG", kNinfdVar, "NINF_RELAY_CONFIG"},
    {"NINF_PORT", kNinfdVar, "NINF_RELAY_PORT"},
    {"NINF_LISTEN", kNinfdVar, "NINF_RELAY_LISTEN"},
    {"NINF_KEY_FILE", kNinfdAndClientVar, "NINF_RELAY_KEY_FILE"},
    {"NINF_TLS_CERT", kNinfdAndClientVar, "NINF_RELAY_TLS_CERT"},
    {"NINF_TLS_KEY", kNinfdAndClientVar, "NINF_RELAY_TLS_KEY"},
    {"NINF_INSECURE", kNinfdVar, "NINF_RELAY_INSECURE"},
    {"NINF_MAX_CONNECTIONS", kNinfdVar, "NINF_RELAY_MAX_CONNECTIONS"},
    {"NINF_MAX_CONNECTIONS_PER_CLIENT", kNinfdVar, "NINF_RELAY_MAX_CONNECTIONS_PER_CLIENT"},
    {"NINF_MAX_SERVERS", kOldRelay, "NINF_RELAY_MAX_SERVERS"},
    {"NINF_MAX_PENDING_DIALS", kOldRelay, "NINF_RELAY_MAX_PENDING_DIALS"},
    {"NINF_MAX_BRIDGES_PER_SERVER", kOldRelay, "NINF_RELAY_MAX_BRIDGES_PER_SERVER"},
    {"NINF_DIAL_TIMEOUT_SECONDS", kOldRelay, "NINF_RELAY_DIAL_TIMEOUT_SECONDS"},
    {"NINF_IDLE_TIMEOUT_SECONDS", kNinfdVar, "NINF_RELAY_IDLE_TIMEOUT_SECONDS"},
    {"NINF_REQUEST_TIMEOUT_SECONDS", kNinfdVar, "NINF_RELAY_REQUEST_TIMEOUT_SECONDS"},
    {"NINF_LOG_LEVEL", kNinfdVar, "NINF_RELAY_LOG_LEVEL"},
    {"NINF_READY_FILE", kNinfdVar, "NINF_RELAY_READY_FILE"},
};

}  // namespace

std::span<const RelaySettingSpec> RelaySettingsTable() { return kTable; }

std::span<const daemon::ForeignVariable> RelayForeignVariables() { return kForeignVariables; }

Status ParseRelayInvocation(int argc, const char *const *argv, const daemon::EnvLookup &env,
                            RelayInvocation *out) {
  CLI::App app(
      "ninf-relay: the relay for servers behind firewalls. A reverse ninfd (ninfd --reverse "
      "--relay HOST:PORT) keeps a connection out to it; clients call NAME@HOST:PORT and the "
      "relay joins them to that server's dialed-back connection, moving bytes end to end.\n"
      "Every setting is also read from the environment variable NINF_RELAY_<NAME> and from the "
      "--config file (TOML, or NINF_RELAY_CONFIG); flags win over the environment, which wins "
      "over the file. ninfd's and the client's NINF_<NAME> are not read (the list is at the "
      "end).",
      "ninf-relay");
  daemon::CommandLine cl;
  cl.version_text = std::string("ninf-relay ") + NINF_VERSION + "\n";
  cl.default_config_file = InstalledConfigFile("ninf-relay.toml");
  // Variables of its own: a reverse ninfd's NINF_PORT, NINF_READY_FILE,
  // NINF_KEY_FILE, ... often sit in the same shell or EnvironmentFile.
  cl.env_prefix = "NINF_RELAY_";
  cl.foreign_variables = kForeignVariables;
  cl.daemon = "ninf-relay";
  RelayInvocation inv;
  NINF_RETURN_IF_ERROR(daemon::ParseInvocationOf(app, kTable, argc, argv, env, nullptr, &cl, &inv));
  *out = std::move(inv);
  return Status::Ok();
}

}  // namespace ninf::relay
