#include "protocol/numeric_connect.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ninf {

Status ConnectNumeric(const std::string &host, int port, int timeout_ms, int *out) {
  *out = -1;
  sockaddr_storage addr{};
  socklen_t len = 0;
  auto *v4 = reinterpret_cast<sockaddr_in *>(&addr);
  auto *v6 = reinterpret_cast<sockaddr_in6 *>(&addr);
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    len = sizeof *v4;
  } else if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    len = sizeof *v6;
  } else {
    return Status(NINF_ERR_INVALID_ARGUMENT, "'" + host + "' is not a numeric address");
  }
  const int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Status(NINF_ERR_CONNECT, std::string("socket: ") + std::strerror(errno));
  int r = ::connect(fd, reinterpret_cast<const sockaddr *>(&addr), len);
  if (r < 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    do {
      r = ::poll(&p, 1, timeout_ms);
    } while (r < 0 && errno == EINTR);
    int err = r == 0 ? ETIMEDOUT : errno;
    socklen_t elen = sizeof err;
    if (r > 0 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0) err = errno;
    errno = err;
    r = err ? -1 : 0;
  }
  int one = 1;
  const int flags = r == 0 ? ::fcntl(fd, F_GETFL) : -1;
  if (r != 0 || flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ||
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
    const int err = errno;
    ::close(fd);
    return Status(NINF_ERR_CONNECT, host + ":" + std::to_string(port) + ": " + std::strerror(err));
  }
  *out = fd;
  return Status::Ok();
}

}  // namespace ninf
