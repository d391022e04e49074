#include "client/options.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

namespace ninf::client {
namespace {

std::mutex g_options_mutex;
std::optional<ClientOptions> g_options;

Status g_env_error;  // what was wrong with the environment, once read

// Reads variable `name` as seconds into *ms: unset or empty keeps the
// default, 0 stores `zero_means`; anything but a number of seconds from 0 to
// one year is an error that names the variable.
Status SecondsFromEnv(const char *name, int zero_means, int *ms) {
  const char *env = std::getenv(name);
  if (!env || !*env) return Status::Ok();
  char *end = nullptr;
  errno = 0;
  const double s = std::strtod(env, &end);
  if (errno != 0 || end == env || *end != '\0' || !(s >= 0) || s > 86400.0 * 365)
    return Status(NINF_ERR_CONFIG,
                  std::string(name) + "='" + env + "' is not a number of seconds (0 to 31536000)");
  *ms = s > 0 ? std::max(1, static_cast<int>(s * 1000)) : zero_means;
  return Status::Ok();
}

// Fills g_options from the environment once (g_options_mutex held).
void LoadFromEnvironment() {
  if (g_options) return;
  ClientOptions o;
  Status st = SecondsFromEnv("NINF_CONNECT_TIMEOUT", o.connect_timeout_ms, &o.connect_timeout_ms);
  if (st.ok()) st = SecondsFromEnv("NINF_TIMEOUT", -1, &o.session_timeout_ms);
  if (st.ok()) st = SecondsFromEnv("NINF_HEARTBEAT", 0, &o.heartbeat_ms);
  if (const char *key = std::getenv("NINF_KEY_FILE")) o.key_file = key;
  if (const char *ca = std::getenv("NINF_TLS_CA")) o.tls_ca = ca;
  if (const char *cert = std::getenv("NINF_TLS_CERT")) o.tls_cert = cert;
  if (const char *key = std::getenv("NINF_TLS_KEY")) o.tls_key = key;
  if (const char *t = std::getenv("NINF_TRANSPORT"); st.ok() && t && *t) {
    const std::string v = t;
    if (v == "auto")
      o.transport = ClientOptions::Transport::kAuto;
    else if (v == "socket")
      o.transport = ClientOptions::Transport::kSocket;
    else if (v == "tcp")
      o.transport = ClientOptions::Transport::kTcp;
    else
      st = Status(NINF_ERR_CONFIG, "NINF_TRANSPORT='" + v + "' is not auto, socket or tcp");
  }
  if (const char *f = std::getenv("NINF_FORWARD"); st.ok() && f && *f) {
    const std::string v = f;
    if (v == "1" || v == "yes")
      o.forward = true;
    else if (v == "0" || v == "no")
      o.forward = false;
    else
      st = Status(NINF_ERR_CONFIG, "NINF_FORWARD='" + v + "' is not 1 or 0");
  }
  if (const char *r = std::getenv("NINF_TLS_RESUME"); st.ok() && r && *r) {
    const std::string v = r;
    if (v == "1" || v == "yes")
      o.tls_resume = true;
    else if (v == "0" || v == "no")
      o.tls_resume = false;
    else
      st = Status(NINF_ERR_CONFIG, "NINF_TLS_RESUME='" + v + "' is not 1 or 0");
  }
  g_env_error = st;
  g_options = st.ok() ? o : ClientOptions();
}

// NINF_KEY_FILE as it is now, unless a config file named the key.
void RefreshKeyFile(ClientOptions *o) {
  if (!o->key_file_from_env) return;
  const char *key = std::getenv("NINF_KEY_FILE");
  o->key_file = key ? key : "";
}

}  // namespace

int HeartbeatMs(const ClientOptions &o) {
  if (o.heartbeat_ms > 0) return o.heartbeat_ms;
  if (o.session_timeout_ms < 0) return 10000;
  return std::clamp(o.session_timeout_ms / 3, 10, 10000);
}

ClientOptions Options() {
  std::lock_guard<std::mutex> lock(g_options_mutex);
  LoadFromEnvironment();
  ClientOptions o = *g_options;
  RefreshKeyFile(&o);
  return o;
}

Status CheckedOptions(ClientOptions *out) {
  std::lock_guard<std::mutex> lock(g_options_mutex);
  LoadFromEnvironment();
  *out = *g_options;
  RefreshKeyFile(out);
  return g_env_error;
}

void SetOptions(const ClientOptions &options) {
  std::lock_guard<std::mutex> lock(g_options_mutex);
  g_options = options;
  g_env_error = Status::Ok();  // explicit settings replace the environment's
}

}  // namespace ninf::client
