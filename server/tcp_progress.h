// What the kernel knows about a TCP socket's transfer, for the watchdog.
// In a file of its own because <linux/tcp.h> (which has the byte counters)
// cannot share a translation unit with <netinet/tcp.h> (which uv.h pulls in).
#pragma once

#include <cstdint>

namespace ninf::server {

struct TcpProgress {
  uint64_t bytes_received = 0;  // from the peer
  uint64_t bytes_acked = 0;     // sent and acknowledged by the peer
};

// False if `fd` is not a TCP socket or the kernel will not say.
bool ReadTcpProgress(int fd, TcpProgress *out);

}  // namespace ninf::server
