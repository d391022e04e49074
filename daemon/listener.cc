#include "daemon/listener.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "daemon/log.h"

namespace ninf::daemon {
namespace {

constexpr int kBacklog = 4096;  // the kernel caps it at net.core.somaxconn

// Accepts at most this many connections per wake-up, so that a flood of
// connects cannot starve the connections already open.
constexpr int kAcceptBatch = 64;

Status BindError(const std::string &what, const std::string &host, int port, int err) {
  return Status(NINF_ERR_SERVER,
                what + " " + host + ":" + std::to_string(port) + ": " + std::strerror(err));
}

}  // namespace

Listener::Listener(uv_loop_t *loop, AcceptFn on_accept)
    : loop_(loop), on_accept_(std::move(on_accept)) {}

// Close() must have run (and the loop with it) before destruction; the fd
// of a Start() that failed half way closes with fd_.
Listener::~Listener() = default;

Status ListenTcp(const std::string &host, int port, UniqueFd *out, std::string *address,
                 int *bound_port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo *res = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0)
    return Status(NINF_ERR_SERVER,
                  "cannot resolve listen address '" + host + "': " + gai_strerror(rc));
  UniqueFd bound_fd;
  Status st = BindError("no address for", host, port, EADDRNOTAVAIL);
  for (addrinfo *ai = res; ai; ai = ai->ai_next) {
    UniqueFd fd(
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
    if (!fd.valid()) {
      st = BindError("cannot create a socket for", host, port, errno);
      continue;
    }
    int one = 1;
    if (::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        ::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd.get(), kBacklog) != 0) {
      st = BindError("cannot listen on", host, port, errno);
      continue;
    }
    bound_fd = std::move(fd);
    break;
  }
  ::freeaddrinfo(res);
  if (!bound_fd.valid()) return st;

  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  if (::getsockname(bound_fd.get(), reinterpret_cast<sockaddr *>(&bound), &len) != 0)
    return BindError("cannot read the address of", host, port, errno);
  *address = FormatAddress(reinterpret_cast<sockaddr *>(&bound));
  *bound_port = bound.ss_family == AF_INET6
                    ? ntohs(reinterpret_cast<sockaddr_in6 *>(&bound)->sin6_port)
                    : ntohs(reinterpret_cast<sockaddr_in *>(&bound)->sin_port);
  *out = std::move(bound_fd);
  return Status::Ok();
}

Status Listener::Start(const std::string &host, int port) {
  if (Status st = ListenTcp(host, port, &fd_, &address_, &port_); !st.ok()) return st;
  return Watch();
}

Status Listener::StartUnix(const std::string &path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path[0] != '/' || path.size() >= sizeof addr.sun_path)
    return Status(NINF_ERR_SERVER,
                  "bad Unix-domain socket path '" + path + "' (absolute, at most 107 bytes)");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const auto *sa = reinterpret_cast<const sockaddr *>(&addr);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Status(NINF_ERR_SERVER, std::string("socket: ") + std::strerror(errno));
  int rc = ::bind(fd.get(), sa, sizeof addr);
  if (rc != 0 && errno == EADDRINUSE) {
    // A leftover of a daemon that did not remove it, or a live one.
    UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (probe.valid() && ::connect(probe.get(), sa, sizeof addr) == 0)
      return Status(NINF_ERR_SERVER, "another server listens on unix:" + path);
    ::unlink(path.c_str());
    rc = ::bind(fd.get(), sa, sizeof addr);
  }
  if (rc != 0 || ::chmod(path.c_str(), 0666) != 0 || ::listen(fd.get(), kBacklog) != 0)
    return Status(NINF_ERR_SERVER, "cannot listen on unix:" + path + ": " + std::strerror(errno));
  fd_ = std::move(fd);
  unix_path_ = path;
  address_ = "unix:" + path;
  return Watch();
}

Status Listener::Watch() {
  if (int rc = uv_poll_init(loop_, &poll_, fd_.get()); rc != 0)
    return Status(NINF_ERR_SERVER, std::string("cannot watch the listener: ") + uv_strerror(rc));
  if (int rc = uv_timer_init(loop_, &resume_); rc != 0) {
    uv_close(reinterpret_cast<uv_handle_t *>(&poll_), nullptr);
    return Status(NINF_ERR_SERVER, std::string("cannot make a timer: ") + uv_strerror(rc));
  }
  poll_.data = this;
  resume_.data = this;
  started_ = true;
  if (int rc = uv_poll_start(&poll_, UV_READABLE, OnReadable); rc != 0) {
    Close();
    return Status(NINF_ERR_SERVER, std::string("cannot watch the listener: ") + uv_strerror(rc));
  }
  return Status::Ok();
}

void Listener::Close() {
  if (!started_ || closed_) return;
  closed_ = true;
  uv_close(reinterpret_cast<uv_handle_t *>(&resume_), nullptr);
  // The fd is closed once libuv has let go of it.
  uv_close(reinterpret_cast<uv_handle_t *>(&poll_),
           [](uv_handle_t *h) { static_cast<Listener *>(h->data)->fd_.reset(); });
  if (!unix_path_.empty()) ::unlink(unix_path_.c_str());
}

void Listener::Pause(uint64_t ms) {
  if (closed_) return;
  // Neither can fail on handles that are initialized and not closing.
  (void)uv_poll_stop(&poll_);
  (void)uv_timer_start(&resume_, OnResume, ms, 0);
}

void Listener::OnResume(uv_timer_t *timer) {
  auto *self = static_cast<Listener *>(timer->data);
  if (self->closed_) return;
  if (int rc = uv_poll_start(&self->poll_, UV_READABLE, OnReadable); rc != 0)
    spdlog::error("event=listen_error address={} error={}", self->address_,
                  Quoted(uv_strerror(rc)));
}

void Listener::OnReadable(uv_poll_t *handle, int status, int) {
  auto *self = static_cast<Listener *>(handle->data);
  if (status < 0) {
    spdlog::error("event=listen_error address={} error={}", self->address_,
                  Quoted(uv_strerror(status)));
    return;
  }
  self->AcceptAll();
}

void Listener::AcceptAll() {
  for (int i = 0; i < kAcceptBatch && !closed_; ++i) {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    UniqueFd fd(::accept4(fd_.get(), reinterpret_cast<sockaddr *>(&peer), &len,
                          SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd.valid()) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      // Out of descriptors: stop accepting for a moment instead of spinning
      // on a listener that stays readable.
      spdlog::warn("event=accept_error address={} error={}", address_,
                   Quoted(std::strerror(errno)));
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) Pause(100);
      return;
    }
    if (!unix_path_.empty()) {
      ucred cred{};
      socklen_t cred_len = sizeof cred;
      const bool known = ::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) == 0;
      std::string who =
          known ? "unix:uid=" + std::to_string(cred.uid) + ":" + std::to_string(cred.pid)
                : "unix:uid=?:0";
      on_accept_(std::move(fd), who);
      continue;
    }
    // Without TCP_NODELAY the small frames of a call wait for Nagle: worth a
    // log line, not a refusal.
    int one = 1;
    if (::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
      spdlog::warn("event=nodelay_failed error={}", Quoted(std::strerror(errno)));
    on_accept_(std::move(fd), FormatAddress(reinterpret_cast<sockaddr *>(&peer)));
  }
}

Status WritePortFile(const std::string &path, int port) {
  if (path.empty()) return Status::Ok();  // no ready_file set
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  FILE *f = std::fopen(tmp.c_str(), "we");
  bool ok = f && std::fprintf(f, "%d\n", port) > 0;
  if (f) ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status(NINF_ERR_SERVER,
                  "cannot write the ready file " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace ninf::daemon
