// `ninfd --status`: asks a running daemon for its statistics (FRAME_STATS)
// and prints the `name:value` lines, so that administrators and scripts need
// no client library for a health check.
#pragma once

#include <string>

#include "status.h"

namespace ninf::server {

// Connects to host:port, sends FRAME_STATS and stores the reply text in
// *text. Errors: NINF_ERR_CONNECT, NINF_ERR_TIMEOUT, or what the daemon
// answered.
Status QueryStats(const std::string &host, int port, int timeout_ms, std::string *text);

}  // namespace ninf::server
