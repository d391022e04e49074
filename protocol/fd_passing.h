// Descriptors passed over Unix-domain sockets (SCM_RIGHTS), for the control
// channel (control.cc) and the same-host path's shared segments (wire.cc):
// one way to attach one and one way to collect what came.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace ninf {

// Room for one descriptor in a message's control data.
struct FdControlBuffer {
  alignas(cmsghdr) char bytes[CMSG_SPACE(sizeof(int))];
};

// Attaches `fd` to `mh`, using `buf` for the control data.
inline void AttachFd(msghdr *mh, FdControlBuffer *buf, int fd) {
  std::memset(buf->bytes, 0, sizeof buf->bytes);
  mh->msg_control = buf->bytes;
  mh->msg_controllen = sizeof buf->bytes;
  cmsghdr *c = CMSG_FIRSTHDR(mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
}

// The last descriptor that came with a received message (earlier ones, if
// a peer sent several, are closed); -1 if none.
inline int CollectFd(msghdr *mh) {
  int kept = -1;
  for (cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      if (kept >= 0) ::close(kept);
      std::memcpy(&kept, CMSG_DATA(c) + i * sizeof(int), sizeof kept);
    }
  }
  return kept;
}

}  // namespace ninf
