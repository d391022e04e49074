// Connecting (ConnectTcp, ConnectUnix) and asking who the peer is (wire.h),
// apart from the rest of wire.cc: name resolution is the one piece of the
// protocol that the executables never use, and a statically linked
// executable that pulled in getaddrinfo would need glibc's NSS modules at
// run time (and the linker warns about it).
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "protocol/interrupt.h"
#include "protocol/wire.h"

namespace ninf {

Status ConnectTcp(const std::string &host, int port, int timeout_ms, int *out_fd) {
  if (port <= 0 || port > 65535)
    return Status(NINF_ERR_INVALID_ARGUMENT, "bad port " + std::to_string(port));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo *res = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0)
    return Status(NINF_ERR_CONNECT, "cannot resolve '" + host + "': " + gai_strerror(rc));
  std::string last_error = "no address";
  for (addrinfo *ai = res; ai; ai = ai->ai_next) {
    int fd =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) continue;
    int r = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (r < 0 && errno == EINPROGRESS) {
      // A signal no longer fails the connect (EINTR); an interrupt check
      // (interrupt.h) may end it, and then no other address is tried.
      int err = 0;
      switch (WaitFd(fd, POLLOUT, timeout_ms, &err)) {
        case WaitResult::kReady: {
          socklen_t len = sizeof err;
          if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
          break;
        }
        case WaitResult::kTimeout:
          err = ETIMEDOUT;
          break;
        case WaitResult::kInterrupted:
          ::close(fd);
          ::freeaddrinfo(res);
          return InterruptedStatus();
        case WaitResult::kError:
          break;
      }
      errno = err;
      r = err ? -1 : 0;
    }
    // Connected: blocking from now on (Channel polls for its timeouts), and
    // no Nagle delay for the small frames of a call.
    int one = 1, flags = 0;
    if (r == 0 &&
        ((flags = ::fcntl(fd, F_GETFL)) < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 ||
         ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0))
      r = -1;
    if (r == 0) {
      ::freeaddrinfo(res);
      *out_fd = fd;
      return Status::Ok();
    }
    last_error = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(res);
  return Status(NINF_ERR_CONNECT, host + ":" + service + ": " + last_error);
}

Status ConnectUnix(const std::string &path, int *out_fd) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path)
    return Status(NINF_ERR_CONNECT, "bad Unix-domain socket path '" + path + "'");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status(NINF_ERR_CONNECT, std::string("socket: ") + std::strerror(errno));
  // A local connect does not wait for the network: it succeeds at once or
  // fails (EAGAIN when the listener's backlog is full).
  if (::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
    Status st(NINF_ERR_CONNECT, "unix:" + path + ": " + std::strerror(errno));
    ::close(fd);
    return st;
  }
  *out_fd = fd;
  return Status::Ok();
}

bool PeerIsLoopback(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getpeername(fd, reinterpret_cast<sockaddr *>(&addr), &len) != 0) return false;
  if (addr.ss_family == AF_INET)
    return (ntohl(reinterpret_cast<sockaddr_in *>(&addr)->sin_addr.s_addr) >> 24) == 127;
  if (addr.ss_family == AF_INET6)
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<sockaddr_in6 *>(&addr)->sin6_addr);
  return false;
}

int PeerPid(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return 0;
  return cred.pid;
}

}  // namespace ninf
