#include "client/server_address.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

namespace ninf::client {
namespace {

std::mutex g_mutex;
std::optional<ServerAddress> g_default;  // set explicitly; else from the environment
constexpr char kScheme[] = "ninf://";

}  // namespace

bool IsBareName(const char *name) {
  return name && std::strncmp(name, kScheme, sizeof kScheme - 1) != 0;
}

Status ResolveName(const char *name, ServerAddress *server, std::string *function) {
  if (!name || !*name) return Status(NINF_ERR_INVALID_ARGUMENT, "empty function name");
  if (IsBareName(name)) {
    *function = name;
    return DefaultServer(server);
  }
  std::string rest(name + sizeof kScheme - 1);
  // "ninf://unix:/run/ninfd.sock/dgesv": the path has slashes of its own,
  // and the function name (an identifier) none.
  std::size_t slash = rest.rfind("unix:", 0) == 0 ? rest.rfind('/') : rest.find('/');
  if (slash == std::string::npos || slash + 1 == rest.size())
    return Status(NINF_ERR_INVALID_ARGUMENT, std::string("no function in '") + name + "'");
  NINF_RETURN_IF_ERROR(ParseServerAddress(rest.substr(0, slash), server));
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
    Status st = ParseServerAddress(env, out);
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
