#include "protocol/launch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "ninf.pb.h"
#include "protocol/address.h"
#include "protocol/control_bridge.h"
#include "protocol/fd_passing.h"
#include "protocol/frame.h"
#include "protocol/hex.h"
#include "protocol/numeric_connect.h"

namespace ninf {
namespace {

Status Failed(const std::string &what) {
  return Status(NINF_ERR_COMMUNICATION, "cannot claim the control channel from ninfd: " + what);
}

using Clock = std::chrono::steady_clock;

int MsLeft(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

// Waits until `fd` is readable; false on timeout or error.
bool WaitReadable(int fd, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, MsLeft(deadline));
    if (r < 0 && errno == EINTR) continue;
    return r > 0;
  }
}

// Reads exactly n bytes before `deadline`.
bool ReadExactly(int fd, void *buf, std::size_t n, Clock::time_point deadline) {
  auto *at = static_cast<char *>(buf);
  while (n > 0) {
    if (!WaitReadable(fd, deadline)) return false;
    const ssize_t got = ::recv(fd, at, n, MSG_DONTWAIT);
    if (got == 0) return false;
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    at += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

// A socket listening on the address `conn` left from, any port; its port in
// *port. -1 on failure (errno set).
int ListenBeside(int conn, int *port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(conn, reinterpret_cast<sockaddr *>(&addr), &len) != 0) return -1;
  if (addr.ss_family == AF_INET)
    reinterpret_cast<sockaddr_in *>(&addr)->sin_port = 0;
  else if (addr.ss_family == AF_INET6)
    reinterpret_cast<sockaddr_in6 *>(&addr)->sin6_port = 0;
  const int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::bind(fd, reinterpret_cast<const sockaddr *>(&addr), len) != 0 || ::listen(fd, 16) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) != 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  *port = ntohs(addr.ss_family == AF_INET ? reinterpret_cast<sockaddr_in *>(&addr)->sin_port
                                          : reinterpret_cast<sockaddr_in6 *>(&addr)->sin6_port);
  return fd;
}

// Reads exactly n bytes of `ssl`'s session on `fd` before `deadline`.
bool SslReadExactly(SSL *ssl, int fd, void *buf, std::size_t n, Clock::time_point deadline) {
  auto *at = static_cast<char *>(buf);
  while (n > 0) {
    std::size_t got = 0;
    ERR_clear_error();
    const int r = SSL_read_ex(ssl, at, n, &got);
    if (r == 1) {
      at += got;
      n -= got;
      continue;
    }
    if (SSL_get_error(ssl, r) != SSL_ERROR_WANT_READ || !WaitReadable(fd, deadline)) return false;
  }
  return true;
}

// Whether the next frame `read` brings is a FRAME_CLAIM carrying `token`.
template <typename Read>
bool PresentsToken(Read read, const uint8_t *token, std::size_t token_size) {
  uint8_t raw[kFrameHeaderSize];
  FrameHeader h;
  if (!read(raw, sizeof raw) || !DecodeFrameHeader(raw, 0, &h).ok() || h.type != FRAME_CLAIM ||
      h.header_length > 256)
    return false;
  std::string bytes(h.header_length, '\0');
  wire::Claim claim;
  return read(bytes.data(), bytes.size()) && claim.ParseFromString(bytes) &&
         claim.token().size() == token_size &&
         std::memcmp(claim.token().data(), token, token_size) == 0;
}

// The id or the key of a launch token: SHA-256 of a label and the token.
std::string LaunchDigest(const char *label, const std::string &token) {
  const std::string input = std::string(label) + token;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(input.data(), input.size(), md, &len, EVP_sha256(), nullptr) != 1) return {};
  return std::string(reinterpret_cast<char *>(md), len);
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

namespace ninf {

Status ClaimControlChannelTcp(const std::string &address, const std::string &token, int timeout_ms,
                              int *fd, int *listen_fd) {
  *fd = *listen_fd = -1;
  // The bridge thread uses OpenSSL until the process ends: OpenSSL must not
  // tear itself down at exit() beneath it (the first initialisation decides).
  OPENSSL_init_ssl(OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_LOAD_CONFIG, nullptr);
  HostPort ninfd;
  if (Status st = ParseHostPort(address, HostPort{}, &ninfd); !st.ok() || !ninfd.unix_path.empty())
    return Failed("bad launch address '" + address + "'");
  if (token.size() != kLaunchTokenChars) return Failed("bad launch token");
  int sock = -1;
  if (Status st = ConnectNumeric(ninfd.host, ninfd.port, timeout_ms, &sock); !st.ok())
    return Failed(st.message());
  int port = 0;
  const int listener = ListenBeside(sock, &port);
  auto fail = [&](const std::string &what) {
    ::close(sock);
    if (listener >= 0) ::close(listener);
    return Failed(what);
  };
  if (listener < 0) return fail(std::string("listening for clients: ") + std::strerror(errno));
  const std::string line = LaunchId(token) + " " + std::to_string(port) + "\n";
  if (::send(sock, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()))
    return fail(std::string("send: ") + std::strerror(errno));
  char answer = 0;
  if (!ReadExactly(sock, &answer, 1, Clock::now() + std::chrono::milliseconds(timeout_ms)) ||
      answer != '+')
    return fail("ninfd refused the launch token (or has no such launch)");
  tls::Psk key = LaunchKey(token);
  tls::SslPtr ssl;
  Status st = tls::PskConnect(sock, key, tls::PskKeyExchange::kWithEcdhe, timeout_ms, &ssl);
  OPENSSL_cleanse(key.data(), key.size());
  if (!st.ok()) return fail("TLS with ninfd: " + st.message());
  if (st = StartControlBridge(sock, std::move(ssl), fd); !st.ok()) {  // it closed sock
    ::close(listener);
    return Failed(st.message());
  }
  *listen_fd = listener;
  return Status::Ok();
}

std::string LaunchId(const std::string &token) {
  return HexOf(LaunchDigest("ninf launch id:", token)).substr(0, kLaunchTokenChars);
}

tls::Psk LaunchKey(const std::string &token) {
  tls::Psk key{};
  const std::string digest = LaunchDigest("ninf launch key:", token);
  std::memcpy(key.data(), digest.data(), std::min(key.size(), digest.size()));
  return key;
}

Status AcceptRedirected(int listen_fd, const uint8_t *token, std::size_t token_size, int timeout_ms,
                        int *client_fd, const tls::Psk *psk, tls::SslPtr *ssl) {
  *client_fd = -1;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (WaitReadable(listen_fd, deadline)) {
    const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) continue;
    // A stranger gets a few seconds, not the whole wait.
    const Clock::time_point claim_by =
        std::min(deadline, Clock::now() + std::chrono::milliseconds(5000));
    tls::SslPtr session;
    bool claimed = false;
    if (psk) {
      const int ms = std::max(1, MsLeft(claim_by));
      claimed = tls::PskAccept(fd, *psk, tls::PskKeyExchange::kKeyAlone, ms, &session).ok() &&
                PresentsToken(
                    [&](void *buf, std::size_t n) {
                      return SslReadExactly(session.get(), fd, buf, n, claim_by);
                    },
                    token, token_size);
    } else {
      claimed =
          PresentsToken([&](void *buf, std::size_t n) { return ReadExactly(fd, buf, n, claim_by); },
                        token, token_size);
    }
    if (claimed) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      *client_fd = fd;
      if (ssl) *ssl = std::move(session);
      return Status::Ok();
    }
    ::close(fd);
  }
  return Status(NINF_ERR_TIMEOUT,
                "the redirected client did not come within " + std::to_string(timeout_ms) + " ms");
}

}  // namespace ninf
