#include "status_tool.h"

#include <cstdio>

#include "address.h"
#include "auth.h"
#include "ninf.pb.h"
#include "wire.h"

namespace ninf::server {

Status QueryStats(const std::string &host, int port, int timeout_ms, const std::string &key_file,
                  std::string *text, const std::string &view) {
  auth::KeyRing keys;
  if (!key_file.empty()) NINF_RETURN_IF_ERROR(auth::LoadKeyFile(key_file, &keys));
  int fd = -1;
  NINF_RETURN_IF_ERROR(ConnectTcp(host, port, timeout_ms, &fd));
  Channel channel(fd, timeout_ms);
  if (!keys.keys.empty()) NINF_RETURN_IF_ERROR(auth::AuthenticateToServer(channel, keys.keys[0]));
  wire::StatsRequest request;
  request.set_view(view);
  NINF_RETURN_IF_ERROR(channel.SendFrame(FRAME_STATS, &request));
  wire::StatsReply reply;
  FrameHeader h;
  NINF_RETURN_IF_ERROR(channel.RecvReply(FRAME_STATS_REPLY, 0, &reply, &h));
  *text = reply.text();
  return Status::Ok();
}

int PrintStats(const char *program, const std::string &listen, int port, const std::string &server,
               const std::string &key_file, const std::string &view) {
  std::string host = listen;
  if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
  if (host == "::") host = "::1";
  if (!server.empty()) {
    HostPort target;
    if (Status st = ParseHostPort(server, HostPort{"127.0.0.1", 0}, &target); !st.ok()) {
      std::fprintf(stderr, "%s: %s\n", program, st.message().c_str());
      return 1;
    }
    host = target.host;
    port = target.port;
  }
  std::string text;
  if (Status st = QueryStats(host, port, 5000, key_file, &text, view); !st.ok()) {
    std::fprintf(stderr, "%s: cannot get statistics from %s:%d: %s\n", program, host.c_str(), port,
                 st.ToString().c_str());
    return 1;
  }
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace ninf::server
