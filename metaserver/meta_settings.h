// ninf-meta settings: one table (daemon/settings_table.h has the machinery)
// drives the flags, the NINF_META_<NAME> environment variables and the TOML
// config file (config/ninf-meta.toml explains every key). Precedence,
// highest first: flag > environment > config file > default.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "daemon/settings_table.h"
#include "daemon/table_settings.h"
#include "daemon/users.h"
#include "protocol/default_ports.h"
#include "protocol/status.h"

namespace ninf::meta {

// What a [limits.NAME] table says to ninf-meta: who may have the function
// placed (daemon/users.h MayCall); the time limits are ninfd's.
struct FunctionAccess {
  std::vector<std::string> allow{};
};

struct MetaSettings {
  int64_t port = kMetaPort;  // 0: any free port
  std::string listen = "127.0.0.1";
  std::string policy = "completion";
  int64_t report_ms = 1000;          // servers report at least this often
  int64_t lease_ms = 5000;           // a server silent this long leaves placement
  int64_t retries = 2;               // further servers named with each placement
  int64_t probe_seconds = 60;        // a link without a sample this recent is probed
  int64_t probe_wait_seconds = 30;   // one client probes a link; others wait this long
  int64_t probe_small_bytes = 1024;  // the two probe sizes (latency, bandwidth)
  int64_t probe_large_bytes = int64_t{1} << 20;
  int64_t default_bandwidth = 12500000;  // bytes/s of a link never measured (100 Mbit/s)
  int64_t default_latency_us = 1000;
  int64_t reservation_seconds = 60;
  int64_t max_connections = 4096;
  int64_t max_connections_per_client = 256;
  int64_t idle_timeout_seconds = 60;
  int64_t request_timeout_seconds = 10;
  std::string log_level = "info";
  std::string ready_file;
  std::string key_file;
  bool insecure = false;
  bool allow_plaintext = false;  // a non-loopback listen with keys but no TLS, on purpose
  std::string metrics;           // "[HOST:]PORT" of the Prometheus endpoint; "": none
  std::string
      tls_cert;  // PEM files (docs/security.md); "": plaintext TCP (ninf-meta: not yet used)
  std::string tls_key;
  std::string tls_client_ca;
  // PEM trust anchors its tools (--status, --servers, --links, --list)
  // verify a TLS ninf-meta with; "": they speak plaintext.
  std::string tls_ca;
  // The config file's [users.NAME] and [limits.NAME] tables, as given
  // (ninfd's user model, daemon/user_tables.h: the identity keys and the
  // allow lists). Live: SIGHUP reads them again.
  daemon::NamedTables users;
  daemon::NamedTables function_limits;

  // Every [users.NAME] table.
  daemon::UserSpecs Users() const;
  // Who may have `function` placed (empty: every user).
  std::vector<std::string> AllowOf(std::string_view function) const;
};

using MetaSettingSpec = daemon::SettingSpecOf<MetaSettings>;

std::span<const MetaSettingSpec> MetaSettingsTable();

// ninfd's and the client's variables that ninf-meta does not read, each
// with ninf-meta's own for the same setting (NINF_KEY_FILE ->
// NINF_META_KEY_FILE): the one table of these pairs.
std::span<const daemon::ForeignVariable> MetaForeignVariables();

// The keys whose values differ between `a` and `b` (SIGHUP: ninf-meta
// applies log_level live and reports the others as needing a restart).
std::vector<std::string> ChangedMetaSettings(const MetaSettings &a, const MetaSettings &b);

// What the command line asks ninf-meta to do.
struct MetaInvocation {
  MetaSettings settings;
  std::string config_file;
  // --status, --servers, --links: ask a running ninf-meta and exit.
  std::string view;           // "" (none), "stats", "servers", "links", "functions"
  std::string status_server;  // --server host:port ("" = listen:port)
  bool exit_now = false;
  std::string output;
  // ninfd's or the client's variables that are set where ninf-meta's own
  // are not: not read; main warns of each once (daemon::ForeignVariableWarning).
  std::vector<daemon::ForeignVariable> ignored_variables;
};

// Errors (NINF_ERR_INVALID_ARGUMENT) carry a message fit for the user.
Status ParseMetaInvocation(int argc, const char *const *argv, const daemon::EnvLookup &env,
                           MetaInvocation *out);

}  // namespace ninf::meta
