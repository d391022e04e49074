// `ninfd --status`: asks a running daemon for its statistics (FRAME_STATS)
// and prints the `name:value` lines, so that administrators and scripts need
// no client library for a health check.
#pragma once

#include <string>

#include "status.h"

namespace ninf::server {

// Connects to host:port, proves it holds the first key of `key_file` when
// one is given (the daemon's own key_file setting: --status asks with the
// daemon's key), sends FRAME_STATS and stores the reply text in *text.
// Errors: NINF_ERR_CONFIG for a bad key file, NINF_ERR_CONNECT,
// NINF_ERR_TIMEOUT, NINF_ERR_AUTH, or what the daemon answered.
Status QueryStats(const std::string &host, int port, int timeout_ms, const std::string &key_file,
                  std::string *text);

}  // namespace ninf::server
