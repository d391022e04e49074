// TCP connections to numeric addresses, without name lookup: what the
// statically linked executables use (getaddrinfo in a static binary needs
// the shared glibc of the build at run time, and wire.h's ConnectTcp would
// pull it in). ninfd gives them numeric addresses only: its launch address
// (launch.h) and the addresses of kept data (FRAME_FETCH).
#pragma once

#include <string>

#include "protocol/protocol_export.h"
#include "protocol/status.h"

namespace ninf {

// Connects to `host` (a numeric IPv4 or IPv6 address, without brackets) and
// `port` within `timeout_ms`; *fd is blocking, TCP_NODELAY and
// close-on-exec. Errors: NINF_ERR_INVALID_ARGUMENT (not a numeric address),
// NINF_ERR_CONNECT (refused, unreachable, timed out).
NINF_PROTOCOL_API Status ConnectNumeric(const std::string &host, int port, int timeout_ms, int *fd);

}  // namespace ninf
