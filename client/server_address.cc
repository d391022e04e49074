#include "server_address.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

namespace ninf::client {
namespace {

std::mutex g_mutex;
std::optional<ServerAddress> g_default;  // set explicitly; else from the environment

bool ParsePort(const std::string &s, int *port) {
  if (s.empty() || s.size() > 5) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  *port = std::atoi(s.c_str());
  return *port > 0 && *port <= 65535;
}

}  // namespace

Status ParseHostPort(const std::string &text, ServerAddress *out) {
  ServerAddress a;
  a.port = kDefaultPort;
  std::string port_text;
  if (!text.empty() && text[0] == '[') {
    std::size_t close = text.find(']');
    if (close == std::string::npos) return Status(NINF_ERR_INVALID_ARGUMENT, "bad server address '" + text + "'");
    a.host = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') return Status(NINF_ERR_INVALID_ARGUMENT, "bad server address '" + text + "'");
      port_text = text.substr(close + 2);
      if (!ParsePort(port_text, &a.port)) return Status(NINF_ERR_INVALID_ARGUMENT, "bad port in '" + text + "'");
    }
  } else {
    std::size_t colon = text.rfind(':');
    a.host = text.substr(0, colon);
    if (colon != std::string::npos && !ParsePort(text.substr(colon + 1), &a.port))
      return Status(NINF_ERR_INVALID_ARGUMENT, "bad port in server address '" + text + "'");
  }
  if (a.host.empty()) return Status(NINF_ERR_INVALID_ARGUMENT, "no host in server address '" + text + "'");
  *out = a;
  return Status::Ok();
}

Status ResolveName(const char *name, ServerAddress *server, std::string *function) {
  if (!name || !*name) return Status(NINF_ERR_INVALID_ARGUMENT, "empty function name");
  static constexpr char kScheme[] = "ninf://";
  if (std::strncmp(name, kScheme, sizeof kScheme - 1) != 0) {
    *function = name;
    return DefaultServer(server);
  }
  std::string rest(name + sizeof kScheme - 1);
  std::size_t slash = rest.find('/');
  if (slash == std::string::npos || slash + 1 == rest.size())
    return Status(NINF_ERR_INVALID_ARGUMENT, std::string("no function in '") + name + "'");
  NINF_RETURN_IF_ERROR(ParseHostPort(rest.substr(0, slash), server));
  *function = rest.substr(slash + 1);
  return Status::Ok();
}

Status DefaultServer(ServerAddress *out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_default) {
    *out = *g_default;
    return Status::Ok();
  }
  if (const char *env = std::getenv("NINF_SERVER"); env && *env) {
    Status st = ParseHostPort(env, out);
    if (!st.ok()) return Status(st.code(), "NINF_SERVER: " + st.message());
    return Status::Ok();
  }
  *out = ServerAddress{"localhost", kDefaultPort};
  return Status::Ok();
}

void SetDefaultServer(const ServerAddress &addr) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_default = addr;
}

}  // namespace ninf::client
