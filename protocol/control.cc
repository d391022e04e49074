#include "control.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "fd_passing.h"

namespace ninf {

int SendControl(int sock, const ControlMsg &msg, int pass_fd) {
  const ssize_t n = SendWithFd(sock, &msg, sizeof msg, pass_fd);
  if (n == static_cast<ssize_t>(sizeof msg)) return 0;
  if (n >= 0) errno = EPROTO;
  return -1;
}

int RecvControl(int sock, ControlMsg *msg, int *fd) {
  if (fd) *fd = -1;
  int received = -1;
  bool truncated = false;
  const ssize_t n = RecvWithFd(sock, msg, sizeof *msg, &received, &truncated);
  if (n < 0) return -1;
  if (n == 0 && received < 0) return 0;
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
