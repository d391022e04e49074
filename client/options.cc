#include "options.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

namespace ninf::client {
namespace {

std::mutex g_mutex;
std::optional<ClientOptions> g_options;

Status g_env_error;  // what was wrong with the environment, once read

// Reads variable `name` as seconds into *ms: unset, empty or 0 keeps the
// default; anything but a number of seconds from 0 to one year is an error
// that names the variable.
Status SecondsFromEnv(const char *name, int *ms) {
  const char *env = std::getenv(name);
  if (!env || !*env) return Status::Ok();
  char *end = nullptr;
  errno = 0;
  const double s = std::strtod(env, &end);
  if (errno != 0 || end == env || *end != '\0' || !(s >= 0) || s > 86400.0 * 365)
    return Status(NINF_ERR_CONFIG,
                  std::string(name) + "='" + env + "' is not a number of seconds (0 to 31536000)");
  if (s > 0) *ms = std::max(1, static_cast<int>(s * 1000));
  return Status::Ok();
}

// Fills g_options from the environment once (g_mutex held).
void LoadFromEnvironment() {
  if (g_options) return;
  ClientOptions o;
  Status st = SecondsFromEnv("NINF_CONNECT_TIMEOUT", &o.connect_timeout_ms);
  if (st.ok()) st = SecondsFromEnv("NINF_TIMEOUT", &o.session_timeout_ms);
  if (st.ok()) st = SecondsFromEnv("NINF_HEARTBEAT", &o.heartbeat_ms);
  g_env_error = st;
  g_options = st.ok() ? o : ClientOptions();
}

}  // namespace

ClientOptions Options() {
  std::lock_guard<std::mutex> lock(g_mutex);
  LoadFromEnvironment();
  return *g_options;
}

Status CheckedOptions(ClientOptions *out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  LoadFromEnvironment();
  *out = *g_options;
  return g_env_error;
}

void SetOptions(const ClientOptions &options) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_options = options;
  g_env_error = Status::Ok();  // explicit settings replace the environment's
}

}  // namespace ninf::client
