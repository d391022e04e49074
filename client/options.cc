#include "options.h"

#include <cstdlib>
#include <mutex>
#include <optional>

namespace ninf::client {
namespace {

std::mutex g_mutex;
std::optional<ClientOptions> g_options;

int SecondsFromEnv(const char *name, int fallback_ms) {
  const char *env = std::getenv(name);
  if (!env || !*env) return fallback_ms;
  double s = std::atof(env);
  return s > 0 ? static_cast<int>(s * 1000) : fallback_ms;
}

}  // namespace

ClientOptions Options() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_options) {
    ClientOptions o;
    o.connect_timeout_ms = SecondsFromEnv("NINF_CONNECT_TIMEOUT", o.connect_timeout_ms);
    o.session_timeout_ms = SecondsFromEnv("NINF_TIMEOUT", o.session_timeout_ms);
    o.heartbeat_ms = SecondsFromEnv("NINF_HEARTBEAT", o.heartbeat_ms);
    g_options = o;
  }
  return *g_options;
}

void SetOptions(const ClientOptions &options) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_options = options;
}

}  // namespace ninf::client
