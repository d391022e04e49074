#include "launch_broker.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "fd_passing.h"
#include "launch.h"
#include "log.h"
#include "random_bytes.h"

namespace ninf::server {

namespace {
// A launched rank 0 connects within moments of starting; a connection idle
// this long is not one.
constexpr uint64_t kClaimTimeoutMs = 10000;
}  // namespace

// One connection: its socket, the bytes of its token line so far, and a
// timer that ends it.
struct LaunchBroker::Claim {
  LaunchBroker *broker = nullptr;
  uv_pipe_t pipe{};
  uv_timer_t timer{};
  std::string line;
  char buf[64];
  int open_handles = 0;
  bool closing = false;

  void Close() {
    if (open_handles == 0 || closing) return;
    closing = true;
    broker->claims_.erase(this);
    auto closed = [](uv_handle_t *h) {
      auto *self = static_cast<Claim *>(h->data);
      if (--self->open_handles == 0) delete self;
    };
    uv_close(reinterpret_cast<uv_handle_t *>(&timer), closed);
    uv_close(reinterpret_cast<uv_handle_t *>(&pipe), closed);
  }
};

LaunchBroker::~LaunchBroker() { Close(); }

Status LaunchBroker::Start() {
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
  return Status::Ok();
}

std::string LaunchBroker::Expect(UniqueFd channel) {
  static const char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : RandomBytes(kLaunchTokenChars / 2)) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  if (token.size() != kLaunchTokenChars) return {};  // no randomness: the claim will fail
  channels_[token] = std::move(channel);
  return token;
}

void LaunchBroker::Forget(const std::string &token) { channels_.erase(token); }

void LaunchBroker::OnConnection(uv_stream_t *server, int status) {
  auto *self = static_cast<LaunchBroker *>(server->data);
  if (status < 0) return;
  auto *claim = new Claim;
  claim->broker = self;
  uv_pipe_init(self->loop_, &claim->pipe, 0);
  uv_timer_init(self->loop_, &claim->timer);
  claim->pipe.data = claim->timer.data = claim;
  claim->open_handles = 2;
  self->claims_.insert(claim);
  if (uv_accept(server, reinterpret_cast<uv_stream_t *>(&claim->pipe)) != 0) {
    claim->Close();
    return;
  }
  uv_timer_start(
      &claim->timer, [](uv_timer_t *t) { static_cast<Claim *>(t->data)->Close(); }, kClaimTimeoutMs,
      0);
  uv_read_start(
      reinterpret_cast<uv_stream_t *>(&claim->pipe),
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
        if (c->line.find('\n') != std::string::npos || c->line.size() > kLaunchTokenChars + 1)
          c->broker->Answer(c);
      });
}

void LaunchBroker::Answer(Claim *claim) {
  uv_read_stop(reinterpret_cast<uv_stream_t *>(&claim->pipe));
  const std::string token = claim->line.substr(0, claim->line.find('\n'));
  auto it = channels_.find(token);
  uv_os_fd_t fd = -1;
  if (it != channels_.end() && uv_fileno(reinterpret_cast<uv_handle_t *>(&claim->pipe), &fd) == 0) {
    const char byte = 1;
    // One byte on a fresh local socket: it fits, whatever the blocking mode.
    if (SendWithFd(fd, &byte, 1, it->second.get()) != 1)
      spdlog::warn("event=launch_claim_failed error={}", Quoted(std::strerror(errno)));
    channels_.erase(it);  // one claim per token
  } else {
    spdlog::warn("event=launch_claim_refused reason=\"unknown token\"");
  }
  claim->Close();
}

void LaunchBroker::Close() {
  channels_.clear();
  for (Claim *claim : std::set<Claim *>(claims_)) claim->Close();
  if (listening_) {
    uv_close(reinterpret_cast<uv_handle_t *>(&listener_), nullptr);
    listening_ = false;
  }
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    dir_.clear();
  }
}

}  // namespace ninf::server
