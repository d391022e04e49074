// ninf-relay settings: one table (daemon/settings_table.h has the
// machinery) drives the flags, the NINF_RELAY_<NAME> environment variables
// and the TOML config file (config/ninf-relay.toml explains every key).
// Precedence, highest first: flag > environment > config file > default.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "daemon/settings_table.h"
#include "protocol/default_ports.h"
#include "protocol/status.h"

namespace ninf::relay {

struct RelaySettings {
  int64_t port = kRelayPort;  // clients and reverse servers both connect here
  std::string listen = "127.0.0.1";
  std::string key_file;  // keys reverse servers must prove
  // PEM files (docs/relay.md): with them, servers' control connections are
  // TLS 1.3; clients and dial-backs stay plaintext (their TLS is ninfd's,
  // end to end through the bridge). "": no TLS.
  std::string tls_cert;
  std::string tls_key;
  bool insecure = false;
  int64_t max_connections = 1024;  // connections not yet bridged
  int64_t max_connections_per_client = 256;
  int64_t max_servers = 256;             // registered reverse servers
  int64_t max_pending_dials = 16;        // per server: clients waiting for a dial-back
  int64_t max_bridges_per_server = 256;  // per server: bridged calls at once
  int64_t dial_timeout_seconds = 10;     // a dial-back must arrive within this
  int64_t idle_timeout_seconds = 60;     // a control connection silent this long is dropped
  int64_t request_timeout_seconds = 10;  // a first frame must arrive whole within this
  std::string log_level = "info";
  std::string ready_file;
};

using RelaySettingSpec = daemon::SettingSpecOf<RelaySettings>;

std::span<const RelaySettingSpec> RelaySettingsTable();

// ninfd's and the client's variables that ninf-relay does not read, each
// with ninf-relay's own for the same setting (NINF_READY_FILE ->
// NINF_RELAY_READY_FILE): the one table of these pairs.
std::span<const daemon::ForeignVariable> RelayForeignVariables();

// What the command line asks ninf-relay to do.
struct RelayInvocation {
  RelaySettings settings;
  std::string config_file;
  bool exit_now = false;  // --help, --version: print `output`
  std::string output;
  // ninfd's or the client's variables that are set where ninf-relay's own
  // are not: not read; main warns of each once (daemon::ForeignVariableWarning).
  std::vector<daemon::ForeignVariable> ignored_variables;
};

// Errors: NINF_ERR_INVALID_ARGUMENT with a message for the user.
Status ParseRelayInvocation(int argc, const char *const *argv, const daemon::EnvLookup &env,
                            RelayInvocation *out);

}  // namespace ninf::relay
