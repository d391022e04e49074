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
  // Set: a reverse server reached through the relay at host:port, which is
  // asked for the server of this name ("name@relayhost:port", docs/relay.md).
  std::string relay_name;
  // "host:port", "name@host:port" or "unix:/path", the key of caches and maps.
  std::string Key() const {
    if (!unix_path.empty()) return "unix:" + unix_path;
    return (relay_name.empty() ? "" : relay_name + "@") + host + ":" + std::to_string(port);
  }
};

// Parses a port: decimal digits only, 1..65535. False for anything else.
NINF_PROTOCOL_API bool ParsePort(std::string_view text, int *port);

// Whether `name` may name a server at a relay: 1 to 64 of [A-Za-z0-9._-].
NINF_PROTOCOL_API bool IsRelayName(std::string_view name);

// Parses "name@host:port" (a reverse server behind the relay host:port;
// the relay part is parsed as below), "unix:/absolute/path", "host:port", "[v6addr]:port", or, when
// `defaults` allows it, a bare
// "host" / "[v6addr]" (the port is defaults.port; 0 means the port is
// required) or ":port" (the host is defaults.host; empty means the host is
// required). A port is 1..65535 in decimal digits only.
// Errors: NINF_ERR_INVALID_ARGUMENT naming the text.
NINF_PROTOCOL_API Status ParseHostPort(std::string_view text, const HostPort &defaults,
                                       HostPort *out);

}  // namespace ninf
