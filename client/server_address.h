// Which server a call goes to: "ninf://host:port/name" names it; a bare name
// uses the default server (Ninf_set_server / Ninf_parse_arg, else
// NINF_SERVER=host:port, else localhost:3000).
#pragma once

#include <string>

#include "status.h"

namespace ninf::client {

struct ServerAddress {
  std::string host;
  int port = 0;
  std::string Key() const { return host + ":" + std::to_string(port); }
};

// Parses "host:port", "host" (port 3000) or "[v6addr]:port".
Status ParseHostPort(const std::string &text, ServerAddress *out);

// Splits a call name into server and function name.
Status ResolveName(const char *name, ServerAddress *server, std::string *function);

Status DefaultServer(ServerAddress *out);
void SetDefaultServer(const ServerAddress &addr);

inline constexpr int kDefaultPort = 3000;

}  // namespace ninf::client
