#include "control.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ninf {

int SendControl(int sock, const ControlMsg &msg, int pass_fd) {
  iovec iov{const_cast<ControlMsg *>(&msg), sizeof msg};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int))];
  if (pass_fd >= 0) {
    std::memset(cbuf, 0, sizeof cbuf);
    mh.msg_control = cbuf;
    mh.msg_controllen = sizeof cbuf;
    cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cm), &pass_fd, sizeof(int));
  }
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
  alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int))];
  mh.msg_control = cbuf;
  mh.msg_controllen = sizeof cbuf;
  ssize_t n;
  do {
    n = ::recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return -1;
  int received = -1;
  for (cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
      std::memcpy(&received, CMSG_DATA(cm), sizeof(int));
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
