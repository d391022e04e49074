#include "client/client_config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "protocol/default_ports.h"
#include "protocol/near_miss.h"

namespace ninf::client {
namespace {

Status ConfigError(const std::string &path, const std::string &why) {
  return Status(NINF_ERR_CONFIG, path + ": " + why);
}

// "path:LINE", where `node` is in the file.
std::string At(const std::string &path, const toml::node &node) {
  return path + ":" + std::to_string(node.source().begin.line);
}

// A duration in seconds (integer or float) into milliseconds; `zero_means`
// is what 0 stands for (-1: no limit).
Status Seconds(const toml::table &t, const char *key, const std::string &path, int zero_means,
               int *ms) {
  const toml::node *n = t.get(key);
  if (!n) return Status::Ok();
  std::optional<double> v = n->value<double>();
  if (!v || *v < 0 || *v > 86400.0 * 365)
    return ConfigError(At(path, *n), std::string("'") + key + "' must be a number of seconds >= 0");
  *ms = *v == 0 ? zero_means : static_cast<int>(*v * 1000);
  return Status::Ok();
}

// The file's keys are all the client's: a typo is an error, with a guess.
Status CheckKnownKeys(const std::string &path, const toml::table &t) {
  static const std::vector<std::string> kKnown = {
      "default_server", "servers",    "connect_timeout", "session_timeout", "heartbeat",
      "key_file",       "metaserver", "tls_ca",          "tls_cert",        "tls_key"};
  for (auto &&[key, node] : t) {
    const std::string name(key.str());
    if (std::find(kKnown.begin(), kKnown.end(), name) != kKnown.end()) continue;
    const std::string near = NearMiss(name, kKnown);
    return ConfigError(At(path, node), "unknown key '" + name + "'" +
                                           (near.empty() ? "" : " (did you mean '" + near + "'?)"));
  }
  return Status::Ok();
}

// default_server, metaserver and the [servers] table.
Status ReadAddresses(const std::string &path, const toml::table &t, ClientConfig *out) {
  ClientConfig &c = *out;
  if (const toml::node *n = t.get("default_server")) {
    std::optional<std::string> s = n->value<std::string>();
    if (!s) return ConfigError(At(path, *n), "'default_server' must be a string \"host:port\"");
    Status st = ParseServerAddress(*s, &c.default_server);
    if (!st.ok()) return ConfigError(At(path, *n), "default_server: " + st.message());
    c.has_default_server = true;
  }
  if (const toml::node *n = t.get("metaserver")) {
    std::optional<std::string> s = n->value<std::string>();
    if (!s) return ConfigError(At(path, *n), "'metaserver' must be a string \"host:port\"");
    Status st = ParseHostPort(*s, HostPort{"", kMetaPort}, &c.metaserver);
    if (!st.ok()) return ConfigError(At(path, *n), "metaserver: " + st.message());
    c.has_metaserver = true;
  }
  if (const toml::node *n = t.get("servers")) {
    const toml::table *servers = n->as_table();
    if (!servers)
      return ConfigError(At(path, *n), "'servers' must be a table of name = \"host:port\"");
    for (auto &&[name, addr] : *servers) {
      std::optional<std::string> s = addr.value<std::string>();
      ServerAddress a;
      if (!s || !ParseServerAddress(*s, &a).ok())
        return ConfigError(At(path, addr),
                           "servers." + std::string(name.str()) + " must be \"host:port\"");
      c.servers[std::string(name.str())] = a;
    }
  }
  return Status::Ok();
}

// key_file and the TLS files, each over its NINF_* variable.
Status ReadFiles(const std::string &path, const toml::table &t, ClientConfig *out) {
  ClientConfig &c = *out;
  // The file's key_file wins; without one, NINF_KEY_FILE still applies (a
  // config file that only names servers must not turn authentication off).
  if (const char *env = std::getenv("NINF_KEY_FILE")) c.options.key_file = env;
  if (const toml::node *n = t.get("key_file")) {
    std::optional<std::string> s = n->value<std::string>();
    if (!s) return ConfigError(At(path, *n), "'key_file' must be a string (a file name)");
    c.options.key_file = *s;
    c.options.key_file_from_env = false;
  }
  // TLS files (docs/client.md): the file's win over NINF_TLS_CA,
  // NINF_TLS_CERT and NINF_TLS_KEY, which apply without them.
  const struct {
    const char *key, *env;
    std::string *field;
  } tls_files[] = {{"tls_ca", "NINF_TLS_CA", &c.options.tls_ca},
                   {"tls_cert", "NINF_TLS_CERT", &c.options.tls_cert},
                   {"tls_key", "NINF_TLS_KEY", &c.options.tls_key}};
  for (const auto &f : tls_files) {
    if (const char *env = std::getenv(f.env)) *f.field = env;
    if (const toml::node *n = t.get(f.key)) {
      std::optional<std::string> s = n->value<std::string>();
      if (!s)
        return ConfigError(At(path, *n),
                           std::string("'") + f.key + "' must be a string (a PEM file)");
      *f.field = *s;
    }
  }
  return Status::Ok();
}

}  // namespace

Status LoadClientConfig(const std::string &path, ClientConfig *out) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return Status(NINF_ERR_INVALID_ARGUMENT, "configuration file '" + path + "' not found");
  toml::table t;
  try {
    t = toml::parse_file(path);
  } catch (const toml::parse_error &e) {
    return ConfigError(path + ":" + std::to_string(e.source().begin.line) + ":" +
                           std::to_string(e.source().begin.column),
                       std::string(e.description()));
  }
  NINF_RETURN_IF_ERROR(CheckKnownKeys(path, t));
  ClientConfig c;
  NINF_RETURN_IF_ERROR(ReadAddresses(path, t, &c));
  NINF_RETURN_IF_ERROR(Seconds(t, "connect_timeout", path, c.options.connect_timeout_ms,
                               &c.options.connect_timeout_ms));
  NINF_RETURN_IF_ERROR(Seconds(t, "session_timeout", path, -1, &c.options.session_timeout_ms));
  NINF_RETURN_IF_ERROR(Seconds(t, "heartbeat", path, 0, &c.options.heartbeat_ms));
  NINF_RETURN_IF_ERROR(ReadFiles(path, t, &c));
  if (c.options.session_timeout_ms > 0 && c.options.session_timeout_ms < 2 * HeartbeatMs(c.options))
    return ConfigError(path, "session_timeout must be at least twice the heartbeat interval");
  *out = std::move(c);
  return Status::Ok();
}

}  // namespace ninf::client
