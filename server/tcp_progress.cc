#include "server/tcp_progress.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace ninf::server {

bool ReadTcpProgress(int fd, TcpProgress *out) {
  tcp_info info{};
  socklen_t len = sizeof info;
  if (fd < 0 || ::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return false;
  out->bytes_received = info.tcpi_bytes_received;
  out->bytes_acked = info.tcpi_bytes_acked;
  return true;
}

}  // namespace ninf::server
