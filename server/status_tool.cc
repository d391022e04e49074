#include "status_tool.h"

#include <charconv>

#include "ninf.pb.h"
#include "wire.h"

namespace ninf::server {

Status ParseHostPort(const std::string &text, std::string *host, int *port) {
  std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size())
    return Status(NINF_ERR_INVALID_ARGUMENT, "'" + text + "' is not host:port");
  std::string h = text.substr(0, colon);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  int p = 0;
  const char *first = text.data() + colon + 1;
  const char *last = text.data() + text.size();
  auto [end, ec] = std::from_chars(first, last, p);
  if (ec != std::errc() || end != last || p <= 0 || p > 65535)
    return Status(NINF_ERR_INVALID_ARGUMENT, "'" + text + "' has no valid port");
  *host = h.empty() ? "127.0.0.1" : h;
  *port = p;
  return Status::Ok();
}

Status QueryStats(const std::string &host, int port, int timeout_ms, std::string *text) {
  int fd = -1;
  NINF_RETURN_IF_ERROR(ConnectTcp(host, port, timeout_ms, &fd));
  Channel channel(fd, timeout_ms);
  wire::StatsRequest request;
  NINF_RETURN_IF_ERROR(channel.SendFrame(FRAME_STATS, &request));
  wire::StatsReply reply;
  FrameHeader h;
  NINF_RETURN_IF_ERROR(channel.RecvReply(FRAME_STATS_REPLY, 0, &reply, &h));
  *text = reply.text();
  return Status::Ok();
}

}  // namespace ninf::server
