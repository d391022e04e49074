#include "server/control_relay.h"

#include <fcntl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "daemon/log.h"
#include "server/random_bytes.h"

namespace ninf::server {

ControlRelay::ControlRelay(daemon::UniqueFd local, std::string host, int port,
                           std::function<void(ControlRelay *)> on_closed)
    : local_(std::move(local)),
      host_(std::move(host)),
      port_(port),
      on_closed_(std::move(on_closed)) {}

ControlRelay *ControlRelay::Start(uv_loop_t *loop, daemon::UniqueFd local, int tcp,
                                  const tls::Psk &key, std::string host, int port,
                                  std::function<void(ControlRelay *)> on_closed) {
  auto *relay = new ControlRelay(std::move(local), std::move(host), port, std::move(on_closed));
  Status tls = tls::PskServerSession::Start(key, &relay->session_);
  const int flags = ::fcntl(relay->local_.get(), F_GETFL);
  if (flags >= 0) ::fcntl(relay->local_.get(), F_SETFL, flags | O_NONBLOCK);
  uv_tcp_init(loop, &relay->tcp_);
  relay->tcp_.data = relay;
  ++relay->open_handles_;
  const int rc_tcp = uv_tcp_open(&relay->tcp_, tcp);
  if (rc_tcp != 0) ::close(tcp);  // the handle did not take it
  uv_poll_init(loop, &relay->poll_, relay->local_.get());
  relay->poll_.data = relay;
  ++relay->open_handles_;
  if (rc_tcp != 0 || !tls.ok()) {
    spdlog::warn("event=launch_relay_failed error={}",
                 daemon::Quoted(rc_tcp != 0 ? uv_strerror(rc_tcp) : tls.message()));
    relay->Close();
    return relay;
  }
  uv_tcp_nodelay(&relay->tcp_, 1);
  uv_poll_start(&relay->poll_, UV_READABLE | UV_DISCONNECT, OnLocal);
  uv_read_start(
      reinterpret_cast<uv_stream_t *>(&relay->tcp_),
      [](uv_handle_t *, size_t suggested, uv_buf_t *buf) {
        *buf = uv_buf_init(new char[suggested], static_cast<unsigned>(suggested));
      },
      OnTcpRead);
  return relay;
}

void ControlRelay::Close() {
  if (closing_) return;
  closing_ = true;
  auto closed = [](uv_handle_t *h) {
    auto *self = static_cast<ControlRelay *>(h->data);
    if (--self->open_handles_ > 0) return;
    self->local_.reset();  // the Process sees its channel close
    if (self->on_closed_) self->on_closed_(self);
    delete self;
  };
  uv_close(reinterpret_cast<uv_handle_t *>(&poll_), closed);
  uv_close(reinterpret_cast<uv_handle_t *>(&tcp_), closed);
}

void ControlRelay::OnLocal(uv_poll_t *handle, int status, int events) {
  auto *self = static_cast<ControlRelay *>(handle->data);
  if (self->closing_) return;
  for (;;) {
    ControlMsg msg;
    int fd = -1;
    const int r = RecvControl(self->local_.get(), &msg, &fd);
    if (r == 1) {
      if (fd >= 0) ::close(fd);  // nothing the Process sends rank 0 may carry one
      if (msg.kind == CTL_HANDOFF) self->Redirect(&msg);
      self->SendToRemote(msg);
      if (self->closing_) return;  // the stream to rank 0 failed
      continue;
    }
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) break;
    self->Close();  // the Process closed its channel (r == 0), or it broke
    return;
  }
  if (status < 0 || (events & UV_DISCONNECT)) self->Close();
}

void ControlRelay::Redirect(ControlMsg *handoff) {
  const std::string token = RandomBytes(sizeof handoff->redirect_token);
  // Without randomness the token stays zero and rank 0 takes no client:
  // the call fails rather than accept anyone.
  if (token.size() == sizeof handoff->redirect_token)
    std::memcpy(handoff->redirect_token, token.data(), token.size());
  ControlMsg redirected;
  redirected.kind = CTL_REDIRECTED;
  redirected.call_id = handoff->call_id;
  std::memcpy(redirected.redirect_token, handoff->redirect_token, sizeof redirected.redirect_token);
  std::snprintf(redirected.redirect_host, sizeof redirected.redirect_host, "%s", host_.c_str());
  redirected.redirect_port = static_cast<uint32_t>(port_);
  // A small message to a Process that reads its channel as messages come.
  if (SendControl(local_.get(), redirected) != 0) {
    spdlog::warn("event=launch_relay_failed error={}", daemon::Quoted(std::strerror(errno)));
    Close();
  }
}

void ControlRelay::SendToRemote(const ControlMsg &msg) {
  if (Status st = session_->Write(&msg, sizeof msg); !st.ok()) {
    spdlog::warn("event=launch_relay_failed error={}", daemon::Quoted(st.message()));
    Close();
    return;
  }
  SendRecords();
}

void ControlRelay::SendRecords() {
  struct Write {
    uv_write_t req;
    std::string records;
  };
  std::string records = session_->TakeOutput();
  if (records.empty() || closing_) return;
  auto *w = new Write{{}, std::move(records)};
  uv_buf_t buf = uv_buf_init(w->records.data(), static_cast<unsigned>(w->records.size()));
  const int rc = uv_write(&w->req, reinterpret_cast<uv_stream_t *>(&tcp_), &buf, 1,
                          [](uv_write_t *req, int) { delete reinterpret_cast<Write *>(req); });
  if (rc != 0) {
    delete w;
    Close();
  }
}

void ControlRelay::OnTcpRead(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf) {
  auto *self = static_cast<ControlRelay *>(stream->data);
  Status st;
  if (n > 0 && !self->closing_)
    st = self->session_->Feed(buf->base, static_cast<std::size_t>(n), &self->incoming_);
  delete[] buf->base;
  if (n < 0) {
    self->Close();  // rank 0 is gone, or ninfd's side of it
    return;
  }
  if (!st.ok()) {
    // Not the launched process (the token is its key), or a broken stream.
    spdlog::warn("event=launch_relay_failed peer={}:{} error={}", self->host_, self->port_,
                 daemon::Quoted(st.message()));
    self->Close();
    return;
  }
  self->SendRecords();  // the handshake's answers, and what waited for it
  while (!self->closing_ && self->incoming_.size() >= sizeof(ControlMsg)) {
    ControlMsg msg;
    std::memcpy(&msg, self->incoming_.data(), sizeof msg);
    self->incoming_.erase(0, sizeof msg);
    // Control messages are few and small, and the Process reads them as
    // they come: a full socketpair means it is broken.
    if (SendControl(self->local_.get(), msg) != 0) {
      spdlog::warn("event=launch_relay_failed error={}", daemon::Quoted(std::strerror(errno)));
      self->Close();
    }
  }
}

}  // namespace ninf::server
