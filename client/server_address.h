// Which server a call goes to: "ninf://host:port/name" (or
// "ninf://unix:/path/name") names it; a bare name uses the default server
// (Ninf_set_server / Ninf_parse_arg, else NINF_SERVER=host:port or
// NINF_SERVER=unix:/path, else localhost:3000).
#pragma once

#include <string>

#include "protocol/address.h"
#include "protocol/default_ports.h"
#include "protocol/status.h"

namespace ninf::client {

using ServerAddress = HostPort;

inline constexpr int kDefaultPort = kNinfdPort;

// Parses "host:port", "host" (port 3000) or "[v6addr]:port".
inline Status ParseServerAddress(std::string_view text, ServerAddress *out) {
  return ParseHostPort(text, HostPort{"", kDefaultPort}, out);
}

// Whether `name` is a bare function name (no "ninf://" server in it): the
// default server's, or the metaserver's to place.
bool IsBareName(const char *name);

// Splits a call name into server and function name.
Status ResolveName(const char *name, ServerAddress *server, std::string *function);

// Where the default server came from: what a user must change when it
// cannot be reached.
enum class ServerOrigin {
  kBuiltIn,      // nothing set: localhost:3000
  kEnvironment,  // NINF_SERVER
  kSetServer,    // Ninf_set_server()
  kCommandLine,  // -server / -port, read by Ninf_parse_arg()
  kConfigFile,   // default_server in grpc_initialize()'s file
};

Status DefaultServer(ServerAddress *out);
// `where` says more about the origin: the config file's path for
// kConfigFile, the options for kCommandLine ("" when there is nothing to add).
void SetDefaultServer(const ServerAddress &addr, ServerOrigin origin, std::string where = "");

// What to tell a user whose client could not connect to `tried` (appended
// to the connect error): for the default server where it came from and how
// to change it (NINF_SERVER, -server, the config file's default_server, or
// the binding's own ways: SetHowToChooseServer); for another server that
// the call or its handle named it. Reads the default.
std::string UnreachableAdvice(const ServerAddress &tried);

// The same as a pure function: `is_default` whether `tried` is the default
// server, `origin` and `where` how the default was set, `env` NINF_SERVER's
// value ("" when unset), `how_to_choose` the binding's ways to name another
// server ("": the C client's).
std::string UnreachableAdvice(const ServerAddress &tried, bool is_default, ServerOrigin origin,
                              const std::string &where, const std::string &env,
                              const std::string &how_to_choose = "");

// A binding's own ways to name the default server, in the words its users
// know (Python: ninf.set_server(), server=), in place of the C client's
// (NINF_SERVER, Ninf_parse_arg, grpc_initialize's file). Process-wide.
void SetHowToChooseServer(std::string text);

}  // namespace ninf::client
