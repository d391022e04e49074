#include "protocol/control.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "protocol/fd_passing.h"

namespace ninf {

int SendControl(int sock, const ControlMsg &msg, int pass_fd) {
  const ssize_t n = SendWithFd(sock, &msg, sizeof msg, pass_fd);
  if (n == static_cast<ssize_t>(sizeof msg)) return 0;
  if (n >= 0) errno = EPROTO;
  return -1;
}

namespace {

bool IsStream(int sock) {
  int type = 0;
  socklen_t len = sizeof type;
  return ::getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM;
}

// The rest of a message that arrived in part on a stream socket; false (with
// errno) when the peer closed or failed before it was complete.
bool ReadRest(int sock, char *at, std::size_t left) {
  while (left > 0) {
    pollfd p{sock, POLLIN, 0};
    if (::poll(&p, 1, -1) < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    const ssize_t n = ::recv(sock, at, left, 0);
    if (n == 0) errno = EPROTO;
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return false;
    if (n > 0) {
      at += n;
      left -= static_cast<std::size_t>(n);
    }
  }
  return true;
}

}  // namespace

int RecvControl(int sock, ControlMsg *msg, int *fd) {
  if (fd) *fd = -1;
  int received = -1;
  bool truncated = false;
  ssize_t n = RecvWithFd(sock, msg, sizeof *msg, &received, &truncated);
  if (n < 0) return -1;
  if (n == 0 && received < 0) return 0;
  if (n > 0 && n < static_cast<ssize_t>(sizeof *msg) && received < 0 && IsStream(sock)) {
    if (!ReadRest(sock, reinterpret_cast<char *>(msg) + n, sizeof *msg - n)) return -1;
    n = sizeof *msg;
  }
  if (n != static_cast<ssize_t>(sizeof *msg) || truncated) {
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
