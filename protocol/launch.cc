#include "launch.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "fd_passing.h"

namespace ninf {
namespace {

Status Failed(const std::string &what) {
  return Status(NINF_ERR_COMMUNICATION, "cannot claim the control channel from ninfd: " + what);
}

}  // namespace

Status ClaimControlChannel(const std::string &socket_path, const std::string &token, int timeout_ms,
                           int *fd) {
  *fd = -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.empty() || socket_path.size() >= sizeof addr.sun_path)
    return Failed("bad socket path '" + socket_path + "'");
  if (token.size() != kLaunchTokenChars) return Failed("bad launch token");
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  const int sock = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return Failed(std::string("socket: ") + std::strerror(errno));
  auto fail = [&](const std::string &what) {
    ::close(sock);
    return Failed(what);
  };
  if (::connect(sock, reinterpret_cast<const sockaddr *>(&addr), sizeof addr) != 0)
    return fail(socket_path + ": " + std::strerror(errno));
  const std::string line = token + "\n";
  if (::send(sock, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()))
    return fail(std::string("send: ") + std::strerror(errno));
  pollfd p{sock, POLLIN, 0};
  int r;
  do {
    r = ::poll(&p, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return fail("no answer within " + std::to_string(timeout_ms) + " ms");
  if (r < 0) return fail(std::string("poll: ") + std::strerror(errno));
  char byte = 0;
  int received = -1;
  bool truncated = false;
  if (RecvWithFd(sock, &byte, 1, &received, &truncated) <= 0 && received >= 0) {
    ::close(received);
    received = -1;
  }
  ::close(sock);
  if (received < 0) return Failed("ninfd refused the launch token (or has no such launch)");
  *fd = received;
  return Status::Ok();
}

}  // namespace ninf
