// ninf-relay settings: one table (daemon/settings_table.h has the
// machinery) drives the flags, the NINF_<NAME> environment variables and
// the TOML config file. Precedence, highest first: flag > environment >
// config file > default.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "daemon/settings_table.h"
#include "protocol/default_ports.h"
#include "protocol/status.h"

namespace ninf::relay {

struct RelaySettings {
  int64_t port = kRelayPort;  // clients and reverse servers both connect here
  std::string listen = "127.0.0.1";
  std::string key_file;  // keys reverse servers must prove
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

// What the command line asks ninf-relay to do.
struct RelayInvocation {
  RelaySettings settings;
  std::string config_file;
  bool exit_now = false;  // --help, --version: print `output`
  std::string output;
};

// Errors: NINF_ERR_INVALID_ARGUMENT with a message for the user.
Status ParseRelayInvocation(int argc, const char *const *argv, const daemon::EnvLookup &env,
                            RelayInvocation *out);

}  // namespace ninf::relay
