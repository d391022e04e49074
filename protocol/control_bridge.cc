#include "protocol/control_bridge.h"

#include <fcntl.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <utility>

#include "protocol/control.h"
#include "protocol/fd_passing.h"

namespace ninf {
namespace {

// Writes all `n` bytes into the session (the socket blocks: a write waits
// for ninfd to read, as a direct child's would).
bool SslWriteAll(SSL *ssl, const void *data, std::size_t n) {
  std::size_t put = 0;
  return SSL_write_ex(ssl, data, n, &put) == 1 && put == n;
}

// One packet from the executable into the session. False when the
// executable closed its end, or on error.
bool ExecutableToNinfd(int local, SSL *ssl) {
  ControlMsg msg;
  int attached = -1;
  bool truncated = false;
  const ssize_t n = RecvWithFd(local, &msg, sizeof msg, &attached, &truncated);
  if (attached >= 0) ::close(attached);  // a descriptor cannot cross hosts
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  return SslWriteAll(ssl, &msg, static_cast<std::size_t>(n));
}

// What the session has decrypted, as whole messages to the executable;
// `partial` keeps the start of one not yet complete. False when ninfd's
// side ended, or on error.
bool NinfdToExecutable(SSL *ssl, int local, std::string &partial) {
  char buf[4096];
  std::size_t got = 0;
  if (SSL_read_ex(ssl, buf, sizeof buf, &got) != 1) return false;
  partial.append(buf, got);
  while (partial.size() >= sizeof(ControlMsg)) {
    if (::send(local, partial.data(), sizeof(ControlMsg), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(sizeof(ControlMsg)))
      return false;
    partial.erase(0, sizeof(ControlMsg));
  }
  return true;
}

void RunControlBridge(int local, int tcp, tls::SslPtr ssl) {
  std::string partial;
  for (bool running = true; running;) {
    // Bytes OpenSSL has taken from the socket already (read-ahead) are not
    // seen by poll.
    if (SSL_has_pending(ssl.get()) == 1) {
      running = NinfdToExecutable(ssl.get(), local, partial);
      continue;
    }
    pollfd p[2] = {{local, POLLIN, 0}, {tcp, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) {
      running = errno == EINTR;
      continue;
    }
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) running = ExecutableToNinfd(local, ssl.get());
    if (running && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
      running = NinfdToExecutable(ssl.get(), local, partial);
  }
  // Either end's close reaches the other at once: the executable reads the
  // end of its channel, ninfd the end of the stream.
  ssl.reset();
  ::shutdown(tcp, SHUT_RDWR);
  ::close(tcp);
  ::close(local);
}

}  // namespace

Status StartControlBridge(int tcp, tls::SslPtr ssl, int *control) {
  *control = -1;
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    const int err = errno;
    ::close(tcp);
    return Status(NINF_ERR_INTERNAL, std::string("socketpair: ") + std::strerror(err));
  }
  // The bridge blocks in poll and in whole-record reads and writes.
  const int flags = ::fcntl(tcp, F_GETFL);
  if (flags >= 0) (void)::fcntl(tcp, F_SETFL, flags & ~O_NONBLOCK);
  try {
    std::thread(RunControlBridge, pair[1], tcp, std::move(ssl)).detach();
  } catch (const std::system_error &e) {
    ::close(pair[0]);
    ::close(pair[1]);
    ::close(tcp);
    return Status(NINF_ERR_INTERNAL, std::string("cannot start the control bridge: ") + e.what());
  }
  *control = pair[0];
  return Status::Ok();
}

}  // namespace ninf
