#include "client/server_address.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

namespace ninf::client {
namespace {

std::mutex g_server_address_mutex;
std::optional<ServerAddress> g_default;          // set explicitly; else from the environment
ServerOrigin g_origin = ServerOrigin::kBuiltIn;  // of g_default, when set
std::string g_where;                             // more about g_origin
std::string g_how_to_choose;                     // a binding's (SetHowToChooseServer); "": ours
constexpr char kScheme[] = "ninf://";

// The ways to name another server, for every message that suggests one.
constexpr char kHowToChoose[] =
    "set NINF_SERVER=host:port to a running one (or pass -server host:port to a program that "
    "calls Ninf_parse_arg, or set default_server in the file given to grpc_initialize)";

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
  std::lock_guard<std::mutex> lock(g_server_address_mutex);
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

void SetDefaultServer(const ServerAddress &addr, ServerOrigin origin, std::string where) {
  std::lock_guard<std::mutex> lock(g_server_address_mutex);
  g_default = addr;
  g_origin = origin;
  g_where = std::move(where);
}

std::string UnreachableAdvice(const ServerAddress &tried, bool is_default, ServerOrigin origin,
                              const std::string &where, const std::string &env,
                              const std::string &how_to_choose) {
  const std::string at = tried.Key();
  if (!is_default)
    return "; no ninfd at " + at +
           ", the server named by the call (ninf://host:port/name), its handle or the "
           "metaserver: start ninfd there or name another one (NINF_SERVER applies only to "
           "bare function names)";
  std::string from;
  switch (origin) {
    case ServerOrigin::kBuiltIn:
      from = "the built-in default, as NINF_SERVER is not set";
      break;
    case ServerOrigin::kEnvironment:
      from = "NINF_SERVER=" + env;
      break;
    case ServerOrigin::kSetServer:
      from = where.empty() ? "the server set by Ninf_set_server" : where;
      break;
    case ServerOrigin::kCommandLine:
      from = where.empty() ? "-server/-port on the command line" : where + " on the command line";
      break;
    case ServerOrigin::kConfigFile:
      from = "default_server in " + (where.empty() ? std::string("the config file") : where);
      break;
  }
  return "; no ninfd at " + at + ", the default server (from " + from +
         "): start ninfd there, or " + (how_to_choose.empty() ? kHowToChoose : how_to_choose);
}

std::string UnreachableAdvice(const ServerAddress &tried) {
  ServerOrigin origin = ServerOrigin::kBuiltIn;
  std::string where, env, how_to_choose;
  ServerAddress def;
  {
    std::lock_guard<std::mutex> lock(g_server_address_mutex);
    if (g_default) origin = g_origin, where = g_where;
    how_to_choose = g_how_to_choose;
  }
  if (const char *e = std::getenv("NINF_SERVER"); e && *e) env = e;
  if (origin == ServerOrigin::kBuiltIn && !env.empty()) origin = ServerOrigin::kEnvironment;
  const bool is_default = DefaultServer(&def).ok() && def.Key() == tried.Key();
  return UnreachableAdvice(tried, is_default, origin, where, env, how_to_choose);
}

void SetHowToChooseServer(std::string text) {
  std::lock_guard<std::mutex> lock(g_server_address_mutex);
  g_how_to_choose = std::move(text);
}

}  // namespace ninf::client
