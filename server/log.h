// Logging for ninfd: spdlog to stderr, one line per event, key=value fields.
//
//   time=2024-05-01T12:00:00.123 level=info event=call_done call=42 job=7
//     function=dgesv peer=127.0.0.1:51234 outcome=completed bytes_in=... ...
//
// Executables inherit the daemon's stderr, so their own messages land in the
// same stream. Use the spdlog macros' level check (spdlog::debug etc. format
// only when the level is enabled).
#pragma once

#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <string>
#include <string_view>

#include "status.h"

namespace ninf::server {

// Installs the stderr logger with the key=value pattern and `level`
// ("trace" ... "off"). Errors: NINF_ERR_INVALID_ARGUMENT for an unknown level.
Status SetupLogging(const std::string &level);

// A value for a key=value field: returned as is when it is a single token,
// otherwise double-quoted with '"' and '\' escaped and control characters
// replaced, so that one event always stays one parseable line.
std::string Quoted(std::string_view value);

// "127.0.0.1:51234" or "[::1]:51234" for a socket address.
std::string FormatAddress(const sockaddr *addr);

}  // namespace ninf::server
