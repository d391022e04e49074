#include "daemon/connection.h"

#include <openssl/crypto.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "daemon/log.h"
#include "ninf.pb.h"

namespace ninf::daemon {
namespace {

// uv_timer_start and uv_timer_stop cannot fail on an initialized handle
// with a callback, so their results are not checked here; uv_poll_* results
// are (UpdatePoll).

// Requests handled per wake-up, so that one busy client cannot starve others.
constexpr int kFramesPerWakeup = 16;

// A client that does not read its replies stops being read past this much
// pending output.
constexpr std::size_t kMaxPendingOutput = 256 * 1024;

// After a FRAME_ERROR: how long, and how much, to drain before closing.
constexpr uint64_t kLingerMs = 1000;
constexpr uint64_t kMaxDrainBytes = 4 << 20;

// A probe's second heartbeat: long enough for the reset a closed peer
// answers the first one with to come back (a loopback or LAN round trip).
constexpr uint64_t kProbeMs = 200;

}  // namespace

bool Connection::Start(Connection &conn, uv_loop_t *loop, Timeouts timeouts,
                       const tls::Context &tls) {
  if (tls) {
    if (!conn.transport_.StartTls(tls)) return false;
    conn.state_ = State::kHandshake;
  }
  if (int rc = uv_poll_init(loop, &conn.poll_, conn.fd()); rc != 0) {
    spdlog::error("event=connection_error conn={} error={}", conn.id(), Quoted(uv_strerror(rc)));
    return false;  // no handle was opened: the object and its fd go now
  }
  // uv_timer_init cannot fail (it only fills the handle in).
  (void)uv_timer_init(loop, &conn.timer_);
  conn.poll_.data = &conn;
  conn.timer_.data = &conn;
  conn.opened_ms_ = uv_now(loop);
  // A handshake must end within the request timeout, as a request must.
  (void)uv_timer_start(&conn.timer_, OnTimer,
                       conn.transport_.active() ? timeouts.request_ms : timeouts.idle_ms, 0);
  conn.UpdatePoll();  // on failure it closes: OnClosed follows from the close callbacks
  return true;
}

Connection::Connection(UniqueFd fd, uint64_t id, std::string peer, Delegate *delegate,
                       Timeouts timeouts, const RequestRules &rules)
    : fd_(std::move(fd)),
      id_(id),
      peer_(std::move(peer)),
      delegate_(delegate),
      timeouts_(timeouts),
      reader_(rules),
      transport_(fd_.get(), id_, peer_) {}

void Connection::Reply(FrameType type, const google::protobuf::MessageLite *msg, bool secret) {
  // Sealed: the socket carries the client's TLS session with the
  // executable; a plaintext frame of ours would break it.
  if (state_ == State::kClosed || state_ == State::kDraining || transport_.sealed()) return;
  if (secret) wipe_output_ = true;
  AppendFrame(&out_, type, msg);
  Flush();
}

void Connection::ReplyBytes(std::string frames) {
  if (state_ == State::kClosed || state_ == State::kDraining || transport_.sealed()) return;
  if (out_.empty())
    out_ = std::move(frames);  // kept data can be large: no second copy
  else
    out_.append(frames);
  Flush();
}

void Connection::Fail(const Status &st) {
  if (state_ == State::kClosed || state_ == State::kFinishing || state_ == State::kDraining) return;
  if (!transport_.sealed()) AppendErrorFrame(&out_, st);  // sealed: the close is the only answer
  Finish();
}

void Connection::Finish() {
  if (state_ == State::kClosed || state_ == State::kFinishing || state_ == State::kDraining) return;
  state_ = State::kFinishing;
  call_pending_ = false;
  watch_hangup_ = false;
  notify_flushed_ = false;
  heartbeat_ms_ = 0;  // the linger timer below replaces the heartbeat timer
  uv_timer_start(&timer_, OnTimer, kLingerMs, 0);
  Flush();
}

void Connection::WatchHangup(bool on) {
  watch_hangup_ = on;
  UpdatePoll();
}

void Connection::SetHeartbeats(uint64_t period_ms) {
  if (period_ms == 0) {  // stop
    if (heartbeat_ms_ == 0) return;
    heartbeat_ms_ = 0;
    if (state_ == State::kParked) uv_timer_stop(&timer_);
    return;
  }
  if (state_ != State::kParked) return;
  heartbeat_ms_ = period_ms;
  uv_timer_start(&timer_, OnTimer, period_ms, period_ms);
}

void Connection::BeatNow() {
  if (state_ != State::kParked) return;
  SendHeartbeat();
  if (heartbeat_ms_ != 0) uv_timer_start(&timer_, OnTimer, kProbeMs, heartbeat_ms_);
}

void Connection::NotifyWhenFlushed() {
  if (state_ != State::kParked) return;
  notify_flushed_ = true;
  UpdatePoll();
}

void Connection::SendHeartbeat() {
  // The previous beat still on its way is proof of life enough; never queue
  // a second frame behind it.
  if (out_sent_ < out_.size() || transport_.sealed()) return;
  wire::Heartbeat beat;
  AppendFrame(&out_, FRAME_HEARTBEAT, &beat);
  Flush();
}

void Connection::SealTls() {
  transport_.Seal();
  heartbeat_ms_ = 0;
}

void Connection::ContinueHandshake() {
  switch (transport_.ContinueHandshake(rules().plaintext_beside_tls)) {
    case Transport::Handshake::kWaiting:
      UpdatePoll();
      return;
    case Transport::Handshake::kDone:
      state_ = State::kReading;
      uv_timer_start(&timer_, OnTimer, timeouts_.idle_ms, 0);
      UpdatePoll();
      ReadRequests();  // read-ahead may already hold the first request
      return;
    case Transport::Handshake::kPlaintextClient:
      state_ = State::kReading;
      if (rules().plaintext_beside_tls) {  // served as on a plaintext listener
        uv_timer_start(&timer_, OnTimer, timeouts_.idle_ms, 0);
        UpdatePoll();
        ReadRequests();
        return;
      }
      Fail(Status(NINF_ERR_AUTH,
                  "this server requires TLS: set tls_ca in the client's config file (or "
                  "NINF_TLS_CA) to the CA that signed the server's certificate"));
      return;
    case Transport::Handshake::kFailed:
      Close();
      return;
  }
}

void Connection::Close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  uv_close(reinterpret_cast<uv_handle_t *>(&poll_), OnHandleClosed);
  uv_close(reinterpret_cast<uv_handle_t *>(&timer_), OnHandleClosed);
}

void Connection::OnHandleClosed(uv_handle_t *handle) {
  auto *self = static_cast<Connection *>(handle->data);
  if (--self->open_handles_ > 0) return;
  // The owner frees the object (and with it the fd) here: nothing may touch
  // `self` after this call.
  self->delegate_->OnClosed(*self);
}

void Connection::OnPoll(uv_poll_t *handle, int status, int events) {
  auto *self = static_cast<Connection *>(handle->data);
  if (status < 0) {
    // A socket error (usually a reset); libuv has stopped the watcher.
    self->poll_events_ = 0;
    if (self->state_ == State::kParked && !self->call_pending_) {
      if (self->watch_hangup_ || self->watch_input_) {
        self->watch_hangup_ = false;
        self->watch_input_ = false;
        self->delegate_->OnHangup(*self);
      }
      return;
    }
    self->Close();
    return;
  }
  if (self->state_ == State::kHandshake) {
    self->ContinueHandshake();
    return;
  }
  if ((events & UV_WRITABLE) && !self->Flush()) return;
  switch (self->state_) {
    case State::kHandshake:  // handled above
      break;
    case State::kReading:
      // Decrypted bytes may wait inside the TLS session, where poll does
      // not see them.
      if ((events & UV_READABLE) || self->transport_.HasPending()) self->ReadRequests();
      break;
    case State::kDraining:
      if (events & (UV_READABLE | UV_DISCONNECT)) self->Drain();
      break;
    case State::kParked:
      if ((events & (UV_READABLE | UV_DISCONNECT)) && self->watch_input_) {
        self->watch_input_ = false;
        self->UpdatePoll();
        self->delegate_->OnInputArrived(*self);
      } else if ((events & UV_PRIORITIZED) && self->watch_hangup_) {
        // Urgent data is no part of the protocol: a peer sending it is
        // treated as gone (and is not watched again, which would spin).
        self->watch_hangup_ = false;
        self->UpdatePoll();
        self->delegate_->OnHangup(*self);
      } else if ((events & UV_DISCONNECT) && self->watch_hangup_ && !self->peer_shut_write_) {
        // EPOLLRDHUP stays set: from now on only errors are watched.
        self->peer_shut_write_ = true;
        self->UpdatePoll();
        self->delegate_->OnPeerShutWrite(*self);
      }
      break;
    case State::kFinishing:  // only writes, done by Flush() above
    case State::kClosed:
      break;
  }
}

void Connection::OnTimer(uv_timer_t *timer) {
  auto *self = static_cast<Connection *>(timer->data);
  if (self->state_ == State::kHandshake) {
    spdlog::info("event=tls_handshake_timeout conn={} peer={} seconds={}", self->id_, self->peer_,
                 self->timeouts_.request_ms / 1000);
    self->Close();
  } else if (self->state_ == State::kReading && self->in_request_) {
    spdlog::info("event=request_timeout conn={} peer={} seconds={}", self->id_, self->peer_,
                 self->timeouts_.request_ms / 1000);
    self->Fail(Status(NINF_ERR_TIMEOUT, "request not complete within " +
                                            std::to_string(self->timeouts_.request_ms / 1000) +
                                            " s of its first byte; closing the connection"));
  } else if (self->state_ == State::kReading) {
    spdlog::info("event=idle_timeout conn={} peer={} seconds={}", self->id_, self->peer_,
                 self->timeouts_.idle_ms / 1000);
    self->Fail(Status(NINF_ERR_TIMEOUT, "no request for " +
                                            std::to_string(self->timeouts_.idle_ms / 1000) +
                                            " s; closing the connection"));
  } else if (self->state_ == State::kParked) {
    if (self->heartbeat_ms_) self->SendHeartbeat();
  } else if (self->state_ == State::kFinishing || self->state_ == State::kDraining) {
    self->Close();
  }
}

void Connection::ReadRequests() {
  // Over TLS the limit gives way while decrypted bytes wait in the session
  // (poll would not wake for them); read-ahead bounds those.
  for (int frames = 0;
       state_ == State::kReading && (frames < kFramesPerWakeup || transport_.HasPending());) {
    if (out_.size() - out_sent_ > kMaxPendingOutput) break;
    std::span<uint8_t> space = reader_.Space();
    ssize_t n = transport_.Read(space.data(), space.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      spdlog::debug("event=recv_error conn={} peer={} error={}", id_, peer_,
                    Quoted(std::strerror(errno)));
      Close();
      return;
    }
    if (n == 0) {
      if (reader_.partial()) {
        Status st(NINF_ERR_PROTOCOL, "connection closed in the middle of a frame");
        delegate_->OnProtocolError(*this, st);
        Fail(st);
      } else if (out_sent_ < out_.size()) {
        // The peer only shut its write side: finish the replies it waits for.
        Finish();
      } else {
        Close();
      }
      return;
    }
    if (transport_.RefuseClientHello(space.data(), n)) {
      Fail(Status(NINF_ERR_CONNECT,
                  "this server does not speak TLS: unset tls_ca (NINF_TLS_CA) for it, or give "
                  "the server a tls_cert"));
      return;
    }
    if (!in_request_) {  // a request begins: its whole must arrive in time
      in_request_ = true;
      uv_timer_start(&timer_, OnTimer, timeouts_.request_ms, 0);
    }
    if (Status st = reader_.Commit(static_cast<std::size_t>(n)); !st.ok()) {
      delegate_->OnProtocolError(*this, st);
      Fail(st);
      return;
    }
    if (!reader_.complete()) continue;
    ++frames;
    ++requests_;
    in_request_ = false;
    uv_timer_start(&timer_, OnTimer, timeouts_.idle_ms, 0);
    if (HandsOverStream(reader_.header().type)) {
      // Everything after this frame belongs to the executable (or to the
      // other end of a relay's bridge): stop here.
      state_ = State::kParked;
      call_pending_ = true;
      uv_timer_stop(&timer_);
      UpdatePoll();
      if (out_sent_ == out_.size()) DispatchFrame();
      return;
    }
    DispatchFrame();
  }
  UpdatePoll();
}

void Connection::WatchInput(bool on) {
  if (state_ != State::kParked) return;
  watch_input_ = on;
  UpdatePoll();
}

Connection::Unread Connection::PeekInput() const {
  char c;
  ssize_t n = ::recv(fd_.get(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return Unread::kBytes;
  if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return Unread::kEnd;
  return Unread::kNothing;
}

void Connection::SetIdleTimeout(uint64_t ms) {
  timeouts_.idle_ms = ms;
  if (state_ == State::kReading && !in_request_) uv_timer_start(&timer_, OnTimer, ms, 0);
}

void Connection::DispatchFrame() {
  FrameHeader h = reader_.header();
  std::string body(reader_.body());
  reader_.Reset();
  call_pending_ = false;
  delegate_->OnRequest(*this, h, body);
}

bool Connection::Flush() {
  while (out_sent_ < out_.size()) {
    ssize_t n = transport_.Write(out_.data() + out_sent_, out_.size() - out_sent_);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      spdlog::debug("event=send_error conn={} peer={} error={}", id_, peer_,
                    Quoted(std::strerror(errno)));
      Close();
      return false;
    }
    out_sent_ += static_cast<std::size_t>(n);
  }
  if (out_sent_ == out_.size()) {
    if (wipe_output_ && !transport_.sealed()) OPENSSL_cleanse(out_.data(), out_.size());  // a key
    out_.clear();
    out_sent_ = 0;
    if (state_ == State::kFinishing) {
      transport_.Shutdown();
      (void)::shutdown(fd_.get(), SHUT_WR);  // best effort: the peer may be gone
      state_ = State::kDraining;
    } else if (state_ == State::kParked && call_pending_) {
      UpdatePoll();
      DispatchFrame();
      return state_ != State::kClosed;
    } else if (state_ == State::kParked && notify_flushed_) {
      notify_flushed_ = false;
      UpdatePoll();
      delegate_->OnOutputFlushed(*this);
      return state_ != State::kClosed;
    }
  }
  UpdatePoll();
  return true;
}

void Connection::Drain() {
  char scratch[16 * 1024];
  for (;;) {
    ssize_t n = ::recv(fd_.get(), scratch, sizeof scratch, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    drained_ += n > 0 ? static_cast<uint64_t>(n) : 0;
    if (n <= 0 || drained_ > kMaxDrainBytes) {
      Close();
      return;
    }
  }
}

bool Connection::UpdatePoll() {
  bool pending = out_sent_ < out_.size();
  int events = 0;
  switch (state_) {
    case State::kHandshake:
      events = transport_.wants_write() ? UV_WRITABLE : UV_READABLE;
      break;
    case State::kReading:
      if (out_.size() - out_sent_ <= kMaxPendingOutput) events |= UV_READABLE;
      if (pending) events |= UV_WRITABLE;
      break;
    case State::kParked:
      if (watch_hangup_) events |= peer_shut_write_ ? UV_PRIORITIZED : UV_DISCONNECT;
      if (watch_input_) events |= UV_READABLE | UV_DISCONNECT;
      if (pending) events |= UV_WRITABLE;
      break;
    case State::kFinishing:
      events = UV_WRITABLE;
      break;
    case State::kDraining:
      events = UV_READABLE | UV_DISCONNECT;
      break;
    case State::kClosed:
      return true;
  }
  if (events == poll_events_) return true;
  const int rc = events ? uv_poll_start(&poll_, events, OnPoll) : uv_poll_stop(&poll_);
  if (rc != 0) {
    // A connection that cannot be watched can make no progress.
    spdlog::warn("event=poll_error conn={} peer={} error={}", id_, peer_, Quoted(uv_strerror(rc)));
    Close();
    return false;
  }
  poll_events_ = events;
  return true;
}

}  // namespace ninf::daemon
