#include "daemon/log.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "daemon/settings_table.h"

namespace ninf::daemon {

Status SetupLogging(const std::string &level) {
  spdlog::level::level_enum lvl = spdlog::level::from_str(level);
  // from_str maps unknown names to "off"; only "off" itself may mean off.
  if (lvl == spdlog::level::off && level != "off")
    return Status(NINF_ERR_INVALID_ARGUMENT, "unknown log level '" + level + "'");
  // A plain (not colour) sink, because the stream is read by tools and tests;
  // single-threaded, because the event loop is the only thread that logs.
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_st>();
  auto logger = std::make_shared<spdlog::logger>("ninfd", std::move(sink));
  logger->set_pattern("time=%Y-%m-%dT%H:%M:%S.%e level=%l %v");
  logger->set_level(lvl);
  // Flush each event: a crash or SIGKILL must not swallow the last lines.
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  return Status::Ok();
}

std::string Quoted(std::string_view value, std::size_t limit) {
  std::size_t keep = std::min(value.size(), limit);
  // Never cut a UTF-8 character in two: the text may go back to the client
  // in an error message, which must stay valid UTF-8 to parse.
  while (keep < value.size() && keep > 0 &&
         (static_cast<unsigned char>(value[keep]) & 0xC0) == 0x80)
    --keep;
  const std::size_t cut = value.size() - keep;
  value = value.substr(0, keep);
  bool plain = !value.empty() && cut == 0;
  for (char c : value)
    if (c == ' ' || c == '"' || c == '\\' || c == '=' || static_cast<unsigned char>(c) < 0x20 ||
        c == 0x7f)
      plain = false;
  if (plain) return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += ' ';
    } else {
      out += c;
    }
  }
  if (cut) out += "...(" + std::to_string(cut) + " more bytes)";
  out += '"';
  return out;
}

bool LogAllowed(std::string_view kind, uint64_t *suppressed) {
  struct Window {
    std::chrono::steady_clock::time_point start;
    int logged = 0;
    uint64_t dropped = 0;
  };
  static std::map<std::string, Window, std::less<>> windows;
  auto now = std::chrono::steady_clock::now();
  auto it = windows.find(kind);
  if (it == windows.end()) it = windows.emplace(std::string(kind), Window{now}).first;
  Window &w = it->second;
  if (now - w.start >= std::chrono::seconds(1)) {
    w.start = now;
    w.logged = 0;
  }
  if (w.logged >= kLogBurst) {
    ++w.dropped;
    return false;
  }
  ++w.logged;
  *suppressed = w.dropped;
  w.dropped = 0;
  return true;
}

void LogIgnoredVariables(std::span<const ForeignVariable> ignored, std::string_view daemon) {
  for (const ForeignVariable &v : ignored)
    spdlog::warn("event=variable_ignored variable={} use={} message={}", v.name, v.ours,
                 Quoted(ForeignVariableWarning(v, daemon)));
}

std::string FormatAddress(const sockaddr *addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (addr->sa_family == AF_INET) {
    const auto *in = reinterpret_cast<const sockaddr_in *>(addr);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    return std::string(host) + ":" + std::to_string(ntohs(in->sin_port));
  }
  if (addr->sa_family == AF_INET6) {
    const auto *in6 = reinterpret_cast<const sockaddr_in6 *>(addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
    return "[" + std::string(host) + "]:" + std::to_string(ntohs(in6->sin6_port));
  }
  return "unknown";
}

}  // namespace ninf::daemon
