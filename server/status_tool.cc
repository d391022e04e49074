#include "status_tool.h"

#include "auth.h"
#include "ninf.pb.h"
#include "wire.h"

namespace ninf::server {

Status QueryStats(const std::string &host, int port, int timeout_ms, const std::string &key_file,
                  std::string *text) {
  auth::KeyRing keys;
  if (!key_file.empty()) NINF_RETURN_IF_ERROR(auth::LoadKeyFile(key_file, &keys));
  int fd = -1;
  NINF_RETURN_IF_ERROR(ConnectTcp(host, port, timeout_ms, &fd));
  Channel channel(fd, timeout_ms);
  if (!keys.keys.empty()) NINF_RETURN_IF_ERROR(auth::AuthenticateToServer(channel, keys.keys[0]));
  wire::StatsRequest request;
  NINF_RETURN_IF_ERROR(channel.SendFrame(FRAME_STATS, &request));
  wire::StatsReply reply;
  FrameHeader h;
  NINF_RETURN_IF_ERROR(channel.RecvReply(FRAME_STATS_REPLY, 0, &reply, &h));
  *text = reply.text();
  return Status::Ok();
}

}  // namespace ninf::server
