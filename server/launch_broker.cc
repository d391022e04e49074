#include "server/launch_broker.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "daemon/log.h"
#include "protocol/fd_passing.h"
#include "protocol/hex.h"
#include "protocol/launch.h"
#include "server/random_bytes.h"

namespace ninf::server {

namespace {
// A launched rank 0 connects within moments of starting; a connection idle
// this long is not one.
constexpr uint64_t kClaimTimeoutMs = 10000;
}  // namespace

// One connection: its socket (a Unix one, or TCP), the bytes of its token
// line so far, and a timer that ends it.
struct LaunchBroker::Claim {
  LaunchBroker *broker = nullptr;
  bool tcp = false;
  uv_pipe_t pipe{};
  uv_tcp_t tcp_handle{};
  uv_timer_t timer{};
  std::string line;
  char buf[64];
  int open_handles = 0;
  bool closing = false;

  uv_stream_t *stream() {
    return tcp ? reinterpret_cast<uv_stream_t *>(&tcp_handle)
               : reinterpret_cast<uv_stream_t *>(&pipe);
  }
  void Close() {
    if (open_handles == 0 || closing) return;
    closing = true;
    broker->claims_.erase(this);
    auto closed = [](uv_handle_t *h) {
      auto *self = static_cast<Claim *>(h->data);
      if (--self->open_handles == 0) delete self;
    };
    uv_close(reinterpret_cast<uv_handle_t *>(&timer), closed);
    uv_close(reinterpret_cast<uv_handle_t *>(stream()), closed);
  }
};

LaunchBroker::~LaunchBroker() { Close(); }

Status LaunchBroker::Start(const HostPort &tcp) {
  auto failed = [](const std::string &what) {
    return Status(NINF_ERR_EXECUTABLE, "cannot take launched executables' connections: " + what);
  };
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ninfd-launch-XXXXXX";
  if (!::mkdtemp(pattern.data())) return failed(pattern + ": " + std::strerror(errno));
  dir_ = pattern;  // mode 0700: only ninfd's user may connect
  path_ = dir_ + "/control.sock";
  if (int rc = uv_pipe_init(loop_, &listener_, 0); rc != 0) return failed(uv_strerror(rc));
  listener_.data = this;
  listening_ = true;
  if (int rc = uv_pipe_bind(&listener_, path_.c_str()); rc != 0) return failed(uv_strerror(rc));
  if (int rc = uv_listen(reinterpret_cast<uv_stream_t *>(&listener_), 64, OnConnection); rc != 0)
    return failed(uv_strerror(rc));
  return tcp.host.empty() ? Status::Ok() : ListenTcp(tcp);
}

Status LaunchBroker::ListenTcp(const HostPort &tcp) {
  auto failed = [&](const std::string &what) {
    return Status(NINF_ERR_EXECUTABLE, "cannot listen for launched executables at launch_address " +
                                           tcp.host + ":" + std::to_string(tcp.port) + ": " + what);
  };
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo *res = nullptr;
  const std::string port = std::to_string(tcp.port);
  if (int rc = ::getaddrinfo(tcp.host.c_str(), port.c_str(), &hints, &res); rc != 0)
    return failed(gai_strerror(rc));
  uv_tcp_init(loop_, &tcp_listener_);
  tcp_listener_.data = this;
  tcp_listening_ = true;
  int rc = uv_tcp_bind(&tcp_listener_, res->ai_addr, 0);
  ::freeaddrinfo(res);
  if (rc == 0) rc = uv_listen(reinterpret_cast<uv_stream_t *>(&tcp_listener_), 64, OnTcpConnection);
  if (rc != 0) return failed(uv_strerror(rc));
  sockaddr_storage bound{};
  int len = sizeof bound;
  char host[INET6_ADDRSTRLEN] = {};
  uv_tcp_getsockname(&tcp_listener_, reinterpret_cast<sockaddr *>(&bound), &len);
  int bound_port = 0;
  if (bound.ss_family == AF_INET6) {
    auto *a = reinterpret_cast<sockaddr_in6 *>(&bound);
    uv_ip6_name(a, host, sizeof host);
    bound_port = ntohs(a->sin6_port);
    tcp_address_ = std::string("[") + host + "]:" + std::to_string(bound_port);
  } else {
    auto *a = reinterpret_cast<sockaddr_in *>(&bound);
    uv_ip4_name(a, host, sizeof host);
    bound_port = ntohs(a->sin_port);
    tcp_address_ = std::string(host) + ":" + std::to_string(bound_port);
  }
  spdlog::info("event=launch_listening address={}", tcp_address_);
  return Status::Ok();
}

std::string LaunchBroker::Expect(daemon::UniqueFd channel) {
  const std::string token = HexOf(RandomBytes(kLaunchTokenChars / 2));
  if (token.size() != kLaunchTokenChars) return {};  // no randomness: the claim will fail
  channels_[token] = std::move(channel);
  tokens_[LaunchId(token)] = token;
  return token;
}

void LaunchBroker::Forget(const std::string &token) {
  channels_.erase(token);
  tokens_.erase(LaunchId(token));
}

void LaunchBroker::OnConnection(uv_stream_t *server, int status) {
  if (status >= 0) static_cast<LaunchBroker *>(server->data)->Accept(server, false);
}

void LaunchBroker::OnTcpConnection(uv_stream_t *server, int status) {
  if (status >= 0) static_cast<LaunchBroker *>(server->data)->Accept(server, true);
}

void LaunchBroker::Accept(uv_stream_t *server, bool tcp) {
  auto *claim = new Claim;
  claim->broker = this;
  claim->tcp = tcp;
  if (tcp)
    uv_tcp_init(loop_, &claim->tcp_handle);
  else
    uv_pipe_init(loop_, &claim->pipe, 0);
  uv_timer_init(loop_, &claim->timer);
  claim->stream()->data = claim->timer.data = claim;
  claim->open_handles = 2;
  claims_.insert(claim);
  if (uv_accept(server, claim->stream()) != 0) {
    claim->Close();
    return;
  }
  uv_timer_start(
      &claim->timer, [](uv_timer_t *t) { static_cast<Claim *>(t->data)->Close(); }, kClaimTimeoutMs,
      0);
  uv_read_start(
      claim->stream(),
      [](uv_handle_t *h, size_t, uv_buf_t *buf) {
        auto *c = static_cast<Claim *>(h->data);
        *buf = uv_buf_init(c->buf, sizeof c->buf);
      },
      [](uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
        auto *c = static_cast<Claim *>(s->data);
        if (n < 0) {
          c->Close();
          return;
        }
        c->line.append(buf->base, static_cast<std::size_t>(n));
        // "TOKEN\n", or over TCP "ID PORT\n"
        if (c->line.find('\n') != std::string::npos || c->line.size() > kLaunchTokenChars + 8)
          c->broker->Answer(c);
      });
}

void LaunchBroker::Answer(Claim *claim) {
  uv_read_stop(claim->stream());
  const std::string line = claim->line.substr(0, claim->line.find('\n'));
  const std::string word = line.substr(0, line.find(' '));
  int port = 0;
  const bool port_ok = claim->tcp && line.size() > word.size() &&
                       ParsePort(std::string_view(line).substr(word.size() + 1), &port);
  // Over TCP the line names the launch by its token's id: the token stays
  // the key of the channel's TLS session.
  std::string token = word;
  if (claim->tcp) {
    auto id = tokens_.find(word);
    token = id == tokens_.end() ? std::string() : id->second;
  }
  auto it = channels_.find(token);
  uv_os_fd_t fd = -1;
  if (it == channels_.end() || (claim->tcp && !port_ok) ||
      uv_fileno(reinterpret_cast<uv_handle_t *>(claim->stream()), &fd) != 0) {
    spdlog::warn("event=launch_claim_refused reason={}",
                 daemon::Quoted(it == channels_.end() ? "unknown token" : "no port for clients"));
    claim->Close();
    return;
  }
  daemon::UniqueFd channel = std::move(it->second);
  channels_.erase(it);  // one claim per token
  tokens_.erase(LaunchId(token));
  if (claim->tcp) {
    Relay(claim, std::move(channel), token, port);
  } else {
    const char byte = 1;
    // One byte on a fresh local socket: it fits, whatever the blocking mode.
    if (SendWithFd(fd, &byte, 1, channel.get()) != 1)
      spdlog::warn("event=launch_claim_failed error={}", daemon::Quoted(std::strerror(errno)));
  }
  claim->Close();
}

void LaunchBroker::Relay(Claim *claim, daemon::UniqueFd channel, const std::string &token,
                         int port) {
  uv_os_fd_t fd = -1;
  uv_fileno(reinterpret_cast<uv_handle_t *>(claim->stream()), &fd);
  sockaddr_storage peer{};
  int len = sizeof peer;
  char host[INET6_ADDRSTRLEN] = {};
  if (uv_tcp_getpeername(&claim->tcp_handle, reinterpret_cast<sockaddr *>(&peer), &len) == 0) {
    if (peer.ss_family == AF_INET6)
      uv_ip6_name(reinterpret_cast<sockaddr_in6 *>(&peer), host, sizeof host);
    else
      uv_ip4_name(reinterpret_cast<sockaddr_in *>(&peer), host, sizeof host);
  }
  // The claim's handle closes with the claim; the relay keeps a copy of
  // the connection. "+" on a fresh socket fits at once.
  const int conn = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (conn < 0 || !*host || ::send(conn, "+", 1, MSG_NOSIGNAL) != 1) {
    spdlog::warn("event=launch_claim_failed error={}", daemon::Quoted(std::strerror(errno)));
    if (conn >= 0) ::close(conn);
    return;
  }
  spdlog::info("event=launch_claimed over=tcp executable={}:{}", host, port);
  relays_.insert(ControlRelay::Start(loop_, std::move(channel), conn, LaunchKey(token), host, port,
                                     [this](ControlRelay *r) { relays_.erase(r); }));
}

void LaunchBroker::Close() {
  channels_.clear();
  tokens_.clear();
  for (Claim *claim : std::set<Claim *>(claims_)) claim->Close();
  for (ControlRelay *relay : relays_) {
    relay->Orphan();  // it finishes closing after the broker may be gone
    relay->Close();
  }
  relays_.clear();
  if (listening_) {
    uv_close(reinterpret_cast<uv_handle_t *>(&listener_), nullptr);
    listening_ = false;
  }
  if (tcp_listening_) {
    uv_close(reinterpret_cast<uv_handle_t *>(&tcp_listener_), nullptr);
    tcp_listening_ = false;
  }
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    dir_.clear();
  }
}

}  // namespace ninf::server
