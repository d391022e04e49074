#include "control.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "fd_passing.h"

namespace ninf {

int SendControl(int sock, const ControlMsg &msg, int pass_fd) {
  iovec iov{const_cast<ControlMsg *>(&msg), sizeof msg};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  FdControlBuffer cbuf;
  if (pass_fd >= 0) AttachFd(&mh, &cbuf, pass_fd);
  for (;;) {
    ssize_t n = ::sendmsg(sock, &mh, MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(sizeof msg)) return 0;
    if (n < 0 && errno == EINTR) continue;
    if (n >= 0) errno = EPROTO;
    return -1;
  }
}

int RecvControl(int sock, ControlMsg *msg, int *fd) {
  if (fd) *fd = -1;
  iovec iov{msg, sizeof *msg};
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
  if (n < 0) return -1;
  const int received = CollectFd(&mh);
  if (n == 0 && received < 0) return 0;
  if (n != static_cast<ssize_t>(sizeof *msg) || (mh.msg_flags & MSG_TRUNC)) {
    if (received >= 0) ::close(received);
    errno = EPROTO;
    return -1;
  }
  if (fd)
    *fd = received;
  else if (received >= 0)
    ::close(received);
  return 1;
}

}  // namespace ninf
