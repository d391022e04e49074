#include "metaserver/meta_settings.h"

#include "daemon/common_settings.h"
#include "daemon/user_tables.h"
#include "metaserver/placement.h"
#include "protocol/default_ports.h"
#include "protocol/install_paths.h"

#ifndef NINF_VERSION
#define NINF_VERSION "unknown"
#endif

namespace ninf::meta {
namespace {

using daemon::SettingKind;

constexpr int64_t kMaxInt = int64_t{1} << 62;

const MetaSettingSpec kTable[] = {
    daemon::PortRow<MetaSettings>(kMetaPortText),
    daemon::ListenRow<MetaSettings>(),
    {"policy", SettingKind::kString, "completion", 0, 0,
     "how calls are placed: completion (earliest predicted finish: queue, link, compute), "
     "load (least loaded server only), round-robin, random",
     &MetaSettings::policy},
    {"report_ms", SettingKind::kInteger, "1000", 50, 600000,
     "servers send a load report at least this often (and at once on a large change)",
     &MetaSettings::report_ms},
    {"lease_ms", SettingKind::kInteger, "5000", 100, 3600000,
     "a server that sends nothing for this long leaves placement (a closed connection "
     "removes it at once)",
     &MetaSettings::lease_ms},
    {"retries", SettingKind::kInteger, "2", 0, 16,
     "further servers each placement names, where the client retries a call whose server "
     "fails before any result byte",
     &MetaSettings::retries},
    {"probe_seconds", SettingKind::kInteger, "60", 1, 86400,
     "a (client site, server) link with no sample this recent is probed by the client before "
     "the placement",
     &MetaSettings::probe_seconds},
    {"probe_wait_seconds", SettingKind::kInteger, "30", 0, 86400,
     "a link one client was asked to probe is not asked of another client of the same host "
     "and site for this long, unless its sample arrives: clients that start together probe "
     "each link once (the others are placed on what is known meanwhile); 0: every client is "
     "asked",
     &MetaSettings::probe_wait_seconds},
    {"probe_small_bytes", SettingKind::kBytes, "1K", 0, 64 * 1024 - 1,
     "the small probe: its time is the link's latency", &MetaSettings::probe_small_bytes},
    {"probe_large_bytes", SettingKind::kBytes, "1M", 64 * 1024, 16 << 20,
     "the large probe: with the small one, the link's bandwidth", &MetaSettings::probe_large_bytes},
    {"default_bandwidth", SettingKind::kBytes, "12500000", 1, kMaxInt,
     "bytes per second assumed for a link never measured (placements asked not to probe)",
     &MetaSettings::default_bandwidth},
    {"default_latency_us", SettingKind::kInteger, "1000", 0, 60000000,
     "round trip assumed for a link never measured, in microseconds",
     &MetaSettings::default_latency_us},
    {"reservation_seconds", SettingKind::kInteger, "60", 1, 86400,
     "work reserved on a server at placement ends after this long if no report or outcome "
     "covers it first",
     &MetaSettings::reservation_seconds},
    {"max_connections", SettingKind::kInteger, "4096", 1, 1 << 20,
     "open connections, servers' and clients' together", &MetaSettings::max_connections},
    daemon::MaxConnectionsPerClientRow<MetaSettings>(),
    {"idle_timeout_seconds", SettingKind::kInteger, "60", 1, 86400,
     "close a connection that sends nothing for this long", &MetaSettings::idle_timeout_seconds},
    daemon::RequestTimeoutRow<MetaSettings>(),
    daemon::LogLevelRow<MetaSettings>(),
    daemon::ReadyFileRow<MetaSettings>(),
    {"key_file", SettingKind::kString, "", 0, 0,
     "file of shared keys (one per line, mode 0600) that servers and clients must prove they "
     "hold (docs/security.md); \"\": no authentication",
     &MetaSettings::key_file},
    {"insecure", SettingKind::kBool, "false", 0, 0,
     "serve a non-loopback listen address without a key_file: anyone who reaches the port may "
     "register a server and be sent calls",
     &MetaSettings::insecure},
    {"allow_plaintext", SettingKind::kBool, "false", 0, 0,
     "serve a non-loopback listen address with a key_file but without TLS: the servers' "
     "reports and the placements cross the network in clear",
     &MetaSettings::allow_plaintext},
    daemon::MetricsRow<MetaSettings>(),
    daemon::TlsCertRow<MetaSettings>(),
    daemon::TlsKeyRow<MetaSettings>(),
    daemon::TlsClientCaRow<MetaSettings>(),
    {"tls_ca", SettingKind::kString, "", 0, 0,
     "PEM trust anchors with which its tools (--status, --servers, --links, --list) verify a "
     "TLS ninf-meta, showing tls_cert as their client certificate; \"\": they speak plaintext",
     &MetaSettings::tls_ca, daemon::Reload::kLive},
};

constexpr const char *kNinfd = "ninfd's";
constexpr const char *kNinfdAndClient = "ninfd's and the client's";
// ninf-meta read NINF_<NAME> for its own settings before NINF_META_<NAME>:
// an old EnvironmentFile must not change the policy without a word.
constexpr const char *kOldMeta = "an earlier ninf-meta's";

// ninfd's (and the client's) variables for the settings ninf-meta has too,
// and the names an earlier ninf-meta read for its own settings, each beside
// ninf-meta's own: the one list of these pairs. ninf-meta reads
// none of them, and warns of one set while its own and its flag are not
// (daemon::ForeignVariable says why); --help lists them, and
// docs/metaserver.md and ninf-meta(8) list the same (settings_docs checks
// both, and that every key of ninf-meta's table is here).
// The client reads NINF_KEY_FILE, NINF_TLS_CERT and NINF_TLS_KEY
// (client/options.cc).
const daemon::ForeignVariable kForeignVariables[] = {
    {"NINF_CONFIG", kNinfd, "NINF_META_CONFIG"},
    {"NINF_PORT", kNinfd, "NINF_META_PORT"},
    {"NINF_LISTEN", kNinfd, "NINF_META_LISTEN"},
    {"NINF_MAX_CONNECTIONS", kNinfd, "NINF_META_MAX_CONNECTIONS"},
    {"NINF_MAX_CONNECTIONS_PER_CLIENT", kNinfd, "NINF_META_MAX_CONNECTIONS_PER_CLIENT"},
    {"NINF_IDLE_TIMEOUT_SECONDS", kNinfd, "NINF_META_IDLE_TIMEOUT_SECONDS"},
    {"NINF_REQUEST_TIMEOUT_SECONDS", kNinfd, "NINF_META_REQUEST_TIMEOUT_SECONDS"},
    {"NINF_LOG_LEVEL", kNinfd, "NINF_META_LOG_LEVEL"},
    {"NINF_READY_FILE", kNinfd, "NINF_META_READY_FILE"},
    {"NINF_KEY_FILE", kNinfdAndClient, "NINF_META_KEY_FILE"},
    {"NINF_INSECURE", kNinfd, "NINF_META_INSECURE"},
    {"NINF_ALLOW_PLAINTEXT", kNinfd, "NINF_META_ALLOW_PLAINTEXT"},
    {"NINF_METRICS", kNinfd, "NINF_META_METRICS"},
    {"NINF_TLS_CERT", kNinfdAndClient, "NINF_META_TLS_CERT"},
    {"NINF_TLS_KEY", kNinfdAndClient, "NINF_META_TLS_KEY"},
    {"NINF_TLS_CLIENT_CA", kNinfd, "NINF_META_TLS_CLIENT_CA"},
    {"NINF_TLS_CA", kNinfdAndClient, "NINF_META_TLS_CA"},
    {"NINF_POLICY", kOldMeta, "NINF_META_POLICY"},
    {"NINF_REPORT_MS", kOldMeta, "NINF_META_REPORT_MS"},
    {"NINF_LEASE_MS", kOldMeta, "NINF_META_LEASE_MS"},
    {"NINF_RETRIES", kOldMeta, "NINF_META_RETRIES"},
    {"NINF_PROBE_SECONDS", kOldMeta, "NINF_META_PROBE_SECONDS"},
    {"NINF_PROBE_WAIT_SECONDS", kOldMeta, "NINF_META_PROBE_WAIT_SECONDS"},
    {"NINF_PROBE_SMALL_BYTES", kOldMeta, "NINF_META_PROBE_SMALL_BYTES"},
    {"NINF_PROBE_LARGE_BYTES", kOldMeta, "NINF_META_PROBE_LARGE_BYTES"},
    {"NINF_DEFAULT_BANDWIDTH", kOldMeta, "NINF_META_DEFAULT_BANDWIDTH"},
    {"NINF_DEFAULT_LATENCY_US", kOldMeta, "NINF_META_DEFAULT_LATENCY_US"},
    {"NINF_RESERVATION_SECONDS", kOldMeta, "NINF_META_RESERVATION_SECONDS"},
};

}  // namespace

std::span<const MetaSettingSpec> MetaSettingsTable() { return kTable; }

std::span<const daemon::ForeignVariable> MetaForeignVariables() { return kForeignVariables; }

namespace {

using MetaUserKey = daemon::TableKeyOf<MetaSettings, daemon::UserSpec>;
using MetaFunctionKey = daemon::TableKeyOf<MetaSettings, FunctionAccess>;

// The keys of ninf-meta's [users.NAME] and [limits.NAME] tables: those of
// ninfd's that concern it (who a user is, who may call what).
std::span<const MetaUserKey> MetaUserKeys() {
  static const std::vector<MetaUserKey> keys = daemon::IdentityUserKeys<MetaSettings>();
  return keys;
}

std::span<const MetaFunctionKey> MetaFunctionKeys() {
  static const std::vector<MetaFunctionKey> keys = {
      daemon::AllowKey<MetaSettings>(&FunctionAccess::allow)};
  return keys;
}

}  // namespace

daemon::UserSpecs MetaSettings::Users() const {
  daemon::UserSpecs out;
  for (const auto &[name, keys] : users)
    out[name] = daemon::ResolveTable(MetaUserKeys(), MetaSettingsTable(), *this, &keys);
  return out;
}

std::vector<std::string> MetaSettings::AllowOf(std::string_view function) const {
  auto it = function_limits.find(function);
  if (it == function_limits.end()) return {};
  return daemon::ResolveTable(MetaFunctionKeys(), MetaSettingsTable(), *this, &it->second).allow;
}

std::vector<std::string> ChangedMetaSettings(const MetaSettings &a, const MetaSettings &b) {
  return daemon::ChangedSettingKeys(MetaSettingsTable(), a, b);
}

Status ParseMetaInvocation(int argc, const char *const *argv, const daemon::EnvLookup &env,
                           MetaInvocation *out) {
  CLI::App app(
      "ninf-meta: the Ninf metaserver. Servers (ninfd --metaserver) register with it and "
      "report their load; clients (NINF_METASERVER) ask it where each call should run, then "
      "call that server directly.\nEvery setting is also read from the environment variable "
      "NINF_META_<NAME> and from the --config file (TOML, or NINF_META_CONFIG); flags win over "
      "the environment, which wins over the file. ninfd's and the client's NINF_<NAME> are not "
      "read (the list is at the end).",
      "ninf-meta");
  MetaInvocation inv;
  bool status = false, servers = false, links = false, list = false;
  app.add_flag("--status", status, "print a running ninf-meta's statistics and exit");
  app.add_flag("--servers", servers, "print the servers it knows, their load and leases");
  app.add_flag("--links", links,
               "print what it believes of each (client site, server) link: latency, bandwidth, "
               "forecast method and error");
  app.add_flag("--list", list,
               "print the functions its servers serve, with their signatures, and exit");
  app.add_option("--server", inv.status_server,
                 "host:port of the ninf-meta those ask (default: listen:port)")
      ->type_name("HOST:PORT");
  daemon::CommandLine cl;
  cl.version_text = std::string("ninf-meta ") + NINF_VERSION + "\n";
  cl.default_config_file = InstalledConfigFile("ninf-meta.toml");
  // Variables of its own: ninfd's and the client's NINF_PORT, NINF_KEY_FILE,
  // NINF_METRICS, ... often sit in the same shell or EnvironmentFile
  // (docs/metaserver.md).
  cl.env_prefix = "NINF_META_";
  cl.foreign_variables = kForeignVariables;
  cl.daemon = "ninf-meta";
  // The [users.NAME] and [limits.NAME] tables: rows of their own, listed
  // after the flags.
  app.footer(daemon::NamedTablesHelp(MetaFunctionKeys(), "limits", "one per function") +
             daemon::NamedTablesHelp(MetaUserKeys(), "users", "one per user"));
  auto tables = [&inv](const std::string &path, std::string_view key, const toml::table &table,
                       bool *handled) {
    *handled = key == "users" || key == "limits";
    if (key == "users")
      return daemon::ReadNamedTables(MetaUserKeys(), path, "users", daemon::ValidUserName,
                                     daemon::NeedsPrincipal, table, &inv.settings.users);
    if (key == "limits")
      return daemon::ReadNamedTables(MetaFunctionKeys(), path, "limits", nullptr, nullptr, table,
                                     &inv.settings.function_limits);
    return Status::Ok();
  };
  NINF_RETURN_IF_ERROR(daemon::ParseInvocationOf(app, kTable, argc, argv, env, tables, &cl, &inv));
  if (!inv.exit_now && !ParsePolicy(inv.settings.policy))
    return Status(NINF_ERR_INVALID_ARGUMENT, "policy: unknown policy '" + inv.settings.policy +
                                                 "' (completion, load, round-robin, random)");
  inv.view = list ? "functions" : links ? "links" : servers ? "servers" : status ? "stats" : "";
  *out = std::move(inv);
  return Status::Ok();
}

}  // namespace ninf::meta
