// Parsing "host:port": one parser for every program (client server names,
// NINF_SERVER, ninfd --status, client.toml), so that they accept the same
// spellings and refuse the same mistakes.
#pragma once

#include <string>
#include <string_view>

#include "protocol_export.h"
#include "status.h"

namespace ninf {

struct HostPort {
  std::string host;
  int port = 0;
  // "host:port", the key of caches and maps.
  std::string Key() const { return host + ":" + std::to_string(port); }
};

// Parses a port: decimal digits only, 1..65535. False for anything else.
NINF_PROTOCOL_API bool ParsePort(std::string_view text, int *port);

// Parses "host:port", "[v6addr]:port", or, when `defaults` allows it, a bare
// "host" / "[v6addr]" (the port is defaults.port; 0 means the port is
// required) or ":port" (the host is defaults.host; empty means the host is
// required). A port is 1..65535 in decimal digits only.
// Errors: NINF_ERR_INVALID_ARGUMENT naming the text.
NINF_PROTOCOL_API Status ParseHostPort(std::string_view text, const HostPort &defaults,
                                       HostPort *out);

}  // namespace ninf
