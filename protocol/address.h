// Parsing "host:port": one parser for every program (client server names,
// NINF_SERVER, ninfd --status, client.toml), so that they accept the same
// spellings and refuse the same mistakes.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "protocol/protocol_export.h"
#include "protocol/status.h"

namespace ninf {

// A server: TCP host:port, or a Unix-domain socket ("unix:/path", the
// same-host path).
struct HostPort {
  HostPort(std::string h = {}, int p = 0) : host(std::move(h)), port(p) {}

  std::string host;
  int port = 0;
  std::string unix_path;  // set: a Unix-domain socket; host and port unused
  // "host:port" or "unix:/path", the key of caches and maps.
  std::string Key() const {
    return unix_path.empty() ? host + ":" + std::to_string(port) : "unix:" + unix_path;
  }
};

// Parses a port: decimal digits only, 1..65535. False for anything else.
NINF_PROTOCOL_API bool ParsePort(std::string_view text, int *port);

// Parses "unix:/absolute/path", "host:port", "[v6addr]:port", or, when
// `defaults` allows it, a bare
// "host" / "[v6addr]" (the port is defaults.port; 0 means the port is
// required) or ":port" (the host is defaults.host; empty means the host is
// required). A port is 1..65535 in decimal digits only.
// Errors: NINF_ERR_INVALID_ARGUMENT naming the text.
NINF_PROTOCOL_API Status ParseHostPort(std::string_view text, const HostPort &defaults,
                                       HostPort *out);

}  // namespace ninf
