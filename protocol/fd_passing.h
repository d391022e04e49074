// Descriptors passed over Unix-domain sockets (SCM_RIGHTS), for the control
// channel (control.cc), the launch claim (launch.cc, the launch broker) and
// the same-host path's shared segments (wire.cc): one way to attach one and
// one way to collect what came.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
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

// Sends `len` bytes as one message, with `fd` attached when it is >= 0.
// Returns what sendmsg returned (retrying EINTR); no SIGPIPE.
inline ssize_t SendWithFd(int sock, const void *buf, std::size_t len, int fd) {
  iovec iov{const_cast<void *>(buf), len};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  FdControlBuffer cbuf;
  if (fd >= 0) AttachFd(&mh, &cbuf, fd);
  ssize_t n;
  do {
    n = ::sendmsg(sock, &mh, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n;
}

// Receives one message of at most `len` bytes and the descriptor that came
// with it (*fd, close-on-exec; -1 if none). Returns what recvmsg returned
// (retrying EINTR); *truncated tells whether the message was longer.
inline ssize_t RecvWithFd(int sock, void *buf, std::size_t len, int *fd, bool *truncated) {
  iovec iov{buf, len};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  FdControlBuffer cbuf;
  mh.msg_control = cbuf.bytes;
  mh.msg_controllen = sizeof cbuf.bytes;
  ssize_t n;
  do {
    n = ::recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  *fd = n >= 0 ? CollectFd(&mh) : -1;
  *truncated = n >= 0 && (mh.msg_flags & MSG_TRUNC);
  return n;
}

}  // namespace ninf
