#include "log.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace ninf::server {

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

std::string Quoted(std::string_view value) {
  bool plain = !value.empty();
  for (char c : value)
    if (c == ' ' || c == '"' || c == '\\' || c == '=' || static_cast<unsigned char>(c) < 0x20)
      plain = false;
  if (plain) return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
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

}  // namespace ninf::server
