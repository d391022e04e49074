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

Status DefaultServer(ServerAddress *out);
void SetDefaultServer(const ServerAddress &addr);

}  // namespace ninf::client
