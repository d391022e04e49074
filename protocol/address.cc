#include "protocol/address.h"

#include "protocol/default_ports.h"

namespace ninf {
namespace {

Status Bad(std::string_view text, const char *what) {
  return Status(NINF_ERR_INVALID_ARGUMENT,
                std::string(what) + " in server address '" + std::string(text) + "'");
}

}  // namespace

bool ParsePort(std::string_view s, int *port) {
  if (s.empty() || s.size() > 5) return false;
  int value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  if (value <= 0 || value > 65535) return false;
  *port = value;
  return true;
}

bool IsRelayName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '_' || c == '-'))
      return false;
  return true;
}

Status ParseHostPort(std::string_view text, const HostPort &defaults, HostPort *out) {
  // "name@relay": a server name cannot hold '@', an address never does.
  if (std::size_t at = text.find('@'); at != std::string_view::npos) {
    std::string_view name = text.substr(0, at);
    if (!IsRelayName(name))
      return Bad(text, "bad server name before '@' (1 to 64 of A-Z a-z 0-9 . _ -)");
    HostPort relay;
    // A relay's own port, when the caller would take a default at all.
    HostPort relay_defaults = defaults;
    if (relay_defaults.port != 0) relay_defaults.port = kRelayPort;
    NINF_RETURN_IF_ERROR(ParseHostPort(text.substr(at + 1), relay_defaults, &relay));
    if (!relay.unix_path.empty() || !relay.relay_name.empty())
      return Bad(text, "a relay is reached over TCP (name@host:port)");
    relay.relay_name = std::string(name);
    *out = std::move(relay);
    return Status::Ok();
  }
  HostPort a = defaults;
  a.relay_name.clear();
  if (text.substr(0, 5) == "unix:") {
    std::string_view path = text.substr(5);
    // sockaddr_un holds 108 bytes, the terminating NUL included.
    if (path.empty() || path[0] != '/') return Bad(text, "a unix: path must be absolute");
    if (path.size() > 107) return Bad(text, "unix: path longer than 107 bytes");
    a.unix_path = std::string(path);
    *out = std::move(a);
    return Status::Ok();
  }
  std::string_view host = text, port_text;
  bool has_port = false;
  if (!text.empty() && text[0] == '[') {  // [v6addr] or [v6addr]:port
    std::size_t close = text.find(']');
    if (close == std::string_view::npos) return Bad(text, "unclosed '['");
    host = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') return Bad(text, "text after ']'");
      port_text = text.substr(close + 2);
      has_port = true;
    }
  } else if (std::size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    has_port = true;
  }
  if (has_port && !ParsePort(port_text, &a.port)) return Bad(text, "bad port");
  if (!has_port && a.port == 0) return Bad(text, "no port");
  if (!host.empty()) a.host = std::string(host);
  if (a.host.empty()) return Bad(text, "no host");
  *out = std::move(a);
  return Status::Ok();
}

}  // namespace ninf
