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

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "protocol/status.h"

namespace ninf::daemon {

struct ForeignVariable;  // daemon/settings_table.h

// Installs the stderr logger with the key=value pattern and `level`
// ("trace" ... "off"). Errors: NINF_ERR_INVALID_ARGUMENT for an unknown level.
Status SetupLogging(const std::string &level);

// A value for a key=value field: returned as is when it is a single token,
// otherwise double-quoted with '"' and '\' escaped and control characters
// replaced, so that one event always stays one parseable line. Values come
// from clients too (function names, error text), so longer ones are cut at
// kMaxLoggedValue bytes with the number of bytes left out. ninfd's own
// messages that matter whole (why it cannot start) pass a larger `limit`.
inline constexpr std::size_t kMaxLoggedValue = 160;
std::string Quoted(std::string_view value, std::size_t limit = kMaxLoggedValue);

// Events a client can trigger at will (protocol errors, unknown functions,
// refused connections) are logged at most kLogBurst times per second per
// kind; the next line of that kind says how many were left out
// (suppressed=N). Single-threaded, like the event loop that logs.
inline constexpr int kLogBurst = 10;
// Whether an event of `kind` may be logged now; *suppressed is set to how
// many were dropped since the last one logged.
bool LogAllowed(std::string_view kind, uint64_t *suppressed);

template <typename... Args>
void RateLimitedLog(spdlog::level::level_enum level, std::string_view kind,
                    spdlog::format_string_t<Args...> fmt, Args &&...args) {
  if (!spdlog::should_log(level)) return;
  uint64_t suppressed = 0;
  if (!LogAllowed(kind, &suppressed)) return;
  if (suppressed) spdlog::log(level, "event=log_suppressed kind={} count={}", kind, suppressed);
  spdlog::log(level, fmt, std::forward<Args>(args)...);
}
template <typename... Args>
void RateLimitedWarn(std::string_view kind, spdlog::format_string_t<Args...> fmt, Args &&...args) {
  RateLimitedLog(spdlog::level::warn, kind, fmt, std::forward<Args>(args)...);
}
template <typename... Args>
void RateLimitedInfo(std::string_view kind, spdlog::format_string_t<Args...> fmt, Args &&...args) {
  RateLimitedLog(spdlog::level::info, kind, fmt, std::forward<Args>(args)...);
}

// One warning line per variable of another program that `daemon` did not
// read although it was set (CommandLine::ignored_variables), at start:
// event=variable_ignored variable=NINF_KEY_FILE use=NINF_META_KEY_FILE ...
void LogIgnoredVariables(std::span<const ForeignVariable> ignored, std::string_view daemon);

// "127.0.0.1:51234" or "[::1]:51234" for a socket address.
std::string FormatAddress(const sockaddr *addr);

}  // namespace ninf::daemon
