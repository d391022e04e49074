#include "server/relay_link.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "daemon/log.h"
#include "daemon/loop_handles.h"
#include "ninf.pb.h"
#include "protocol/ask.h"
#include "protocol/auth.h"
#include "protocol/wire.h"

namespace ninf::server {
namespace {

using Clock = std::chrono::steady_clock;

// Bounds a connect and each blocking exchange, so Stop() waits no longer.
constexpr int kRelayTimeoutMs = 2000;
// Keep-alives unanswered before the relay counts as gone.
constexpr int kMissedAcks = 3;

// Writes all of `bytes` to the blocking socket `fd`.
Status SendAll(int fd, const std::string &bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return Status(NINF_ERR_COMMUNICATION,
                    std::string("sending to the relay: ") + std::strerror(n < 0 ? errno : EPIPE));
    sent += static_cast<std::size_t>(n);
  }
  return Status::Ok();
}

// A relay asks for the registration again every third of its idle timeout,
// at most 24 h (relay/relay_settings.cc): a longer period is no relay's, and
// would not fit the poll timeout of the session's loop.
constexpr uint32_t kMaxKeepaliveMs = 86400 * 1000 / 3;
// How often at least: a relay that asks for 0 is not flooded.
constexpr uint32_t kMinKeepaliveMs = 100;

// Registers `reg` on `ch`; *period is how often the relay wants it again.
// Errors: the relay's refusal, or NINF_ERR_PROTOCOL for an ack no relay sends.
Status AskRegistration(Channel &ch, const wire::RelayRegister &reg,
                       std::chrono::milliseconds *period) {
  wire::RelayAck ack;
  NINF_RETURN_IF_ERROR(Ask(ch, reg, &ack));
  if (ack.keepalive_ms() > kMaxKeepaliveMs)
    return Status(NINF_ERR_PROTOCOL,
                  "the relay's keepalive_ms " + std::to_string(ack.keepalive_ms()) +
                      " is over the limit of " + std::to_string(kMaxKeepaliveMs));
  *period = std::chrono::milliseconds(std::max(ack.keepalive_ms(), kMinKeepaliveMs));
  return Status::Ok();
}

}  // namespace

RelayLink::RelayLink(uv_loop_t *loop, Config config, AcceptFn accept)
    : loop_(loop), config_(std::move(config)), accept_(std::move(accept)) {}

RelayLink::~RelayLink() { Stop(); }

Status RelayLink::Start() {
  auth::Nonce instance;
  NINF_RETURN_IF_ERROR(auth::MakeNonce(&instance));
  instance_.assign(reinterpret_cast<const char *>(instance.data()), instance.size());
  if (int rc = uv_async_init(loop_, &async_, OnDialed); rc != 0)
    return Status(NINF_ERR_SERVER,
                  std::string("relay: cannot make a wake-up handle: ") + uv_strerror(rc));
  async_.data = this;
  async_open_ = true;
  // The first registration here, so that a name the relay gives another
  // server (a cloned host's relay_name) stops this ninfd at its start
  // rather than in a log line of a thread that tries again forever.
  std::unique_ptr<Channel> first;
  if (Status st = Open(&first); st.code() == NINF_ERR_CONFIG) {
    return Status(NINF_ERR_CONFIG, "relay " + config_.relay.Key() + ": " + st.message());
  } else if (!st.ok()) {
    spdlog::warn("event=relay_state state=lost relay={} name={} error={}", config_.relay.Key(),
                 config_.name, daemon::Quoted(st.ToString()));
  }
  thread_ = std::thread([this, ch = std::move(first)]() mutable { Run(std::move(ch)); });
  return Status::Ok();
}

void RelayLink::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    if (session_fd_ >= 0) ::shutdown(session_fd_, SHUT_RDWR);  // ends a blocked read
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  daemon::CloseIfOpen(&async_, &async_open_);
  dialed_.clear();  // connections no client will use now
}

void RelayLink::OnDialed(uv_async_t *async) {
  auto *self = static_cast<RelayLink *>(async->data);
  std::deque<daemon::UniqueFd> ready;
  {
    std::lock_guard<std::mutex> lock(self->mutex_);
    ready.swap(self->dialed_);
  }
  const std::string peer = "relay:" + self->config_.relay.Key();
  for (daemon::UniqueFd &fd : ready) self->accept_(std::move(fd), peer);
}

void RelayLink::Run(std::unique_ptr<Channel> first) {
  auto backoff = std::chrono::milliseconds(500);
  for (;;) {
    std::unique_ptr<Channel> ch = std::move(first);
    Status st = ch ? Status::Ok() : Open(&ch);
    if (st.ok()) st = Serve(*ch);
    std::unique_lock<std::mutex> lock(mutex_);
    session_fd_ = -1;  // before the channel closes it: Stop() shuts down what this names
    ch.reset();
    if (stopping_) return;
    spdlog::warn("event=relay_state state=lost relay={} name={} error={} retry_ms={}",
                 config_.relay.Key(), config_.name, daemon::Quoted(st.ToString()), backoff.count());
    wake_.wait_for(lock, backoff, [this] { return stopping_; });
    if (stopping_) return;
    backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
  }
}

Status RelayLink::Open(std::unique_ptr<Channel> *out) {
  keys_ = auth::KeyRing{};
  if (!config_.key_file.empty()) NINF_RETURN_IF_ERROR(auth::LoadKeyFile(config_.key_file, &keys_));
  int fd = -1;
  NINF_RETURN_IF_ERROR(ConnectTcp(config_.relay.host, config_.relay.port, kRelayTimeoutMs, &fd));
  auto ch = std::make_unique<Channel>(fd, kRelayTimeoutMs);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return Status(NINF_ERR_SERVER, "stopping");
    session_fd_ = fd;  // from here Stop() ends a blocked exchange by shutting it down
  }
  spdlog::info("event=relay_state state=connected relay={}", config_.relay.Key());
  Status st = config_.tls.ca.empty() ? Status::Ok() : StartTls(ch.get());
  if (st.ok() && !keys_.keys.empty()) st = auth::AuthenticateToServer(*ch, keys_.keys[0]);
  if (st.ok()) st = AskRegistration(*ch, Registration(), &period_);
  if (config_.tls.ca.empty() && st.message().find("requires TLS") != std::string::npos)
    // The relay's plaintext refusal; the fix is on this side.
    st = Status(NINF_ERR_CONFIG,
                "the relay requires TLS of its servers: set tls_ca in ninfd's settings to the CA "
                "that signed its certificate (it said: " +
                    st.message() + ")");
  if (!st.ok()) {
    std::lock_guard<std::mutex> lock(mutex_);
    session_fd_ = -1;  // before the channel closes it, on return
    return st;
  }
  spdlog::info("event=relay_state state=registered relay={} name={} keepalive_ms={}",
               config_.relay.Key(), config_.name, period_.count());
  *out = std::move(ch);
  return Status::Ok();
}

Status RelayLink::StartTls(Channel *ch) {
  // Read again at every connect, like the key file: a renewed CA needs no
  // restart of the link's thread.
  tls::Context ctx;
  NINF_RETURN_IF_ERROR(tls::MakeClientContext(config_.tls, &ctx));
  tls::SslPtr ssl;
  bool plaintext = false;
  Status st = tls::Connect(ctx, ch->fd(), config_.relay.host, config_.relay.port, kRelayTimeoutMs,
                           &ssl, &plaintext);
  if (plaintext)
    return Status(NINF_ERR_CONFIG,
                  "the relay does not speak TLS, and ninfd has tls_ca: give ninf-relay tls_cert "
                  "and tls_key (docs/relay.md), or unset tls_ca in ninfd's settings");
  if (!st.ok()) return Status(st.code(), "TLS with the relay (tls_ca): " + st.message());
  ch->UseTls(std::move(ssl));
  return Status::Ok();
}

wire::RelayRegister RelayLink::Registration() const {
  wire::RelayRegister reg;
  reg.set_name(config_.name);
  reg.set_instance(instance_);
  return reg;
}

Status RelayLink::Serve(Channel &ch) {
  const std::chrono::milliseconds period = period_;
  const wire::RelayRegister reg = Registration();
  wire::RelayAck ack;  // the keep-alives' answers
  FrameHeader h;
  auto last_ack = Clock::now(), next_beat = Clock::now() + period;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return Status::Ok();
    }
    const auto now = Clock::now();
    if (now - last_ack > kMissedAcks * period)
      return Status(NINF_ERR_TIMEOUT, "the relay stopped answering keep-alives");
    if (now >= next_beat) {
      NINF_RETURN_IF_ERROR(ch.SendFrame(FRAME_RELAY_REGISTER, &reg));
      next_beat = now + period;
    }
    const int wait_ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(next_beat - now).count());
    pollfd p{ch.fd(), POLLIN, 0};
    // Over TLS a second frame may already be decrypted inside the session,
    // where poll does not see it.
    int rc = ch.tls() && SSL_has_pending(ch.ssl()) ? 1 : ::poll(&p, 1, std::max(wait_ms, 1));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return Status(NINF_ERR_COMMUNICATION, std::string("poll: ") + std::strerror(errno));
    if (rc == 0) continue;
    NINF_RETURN_IF_ERROR(ch.RecvHeader(0, &h));
    if (h.type == FRAME_RELAY_ACK) {
      NINF_RETURN_IF_ERROR(ch.RecvMessage(h, &ack));
      last_ack = Clock::now();
    } else if (h.type == FRAME_RELAY_DIAL) {
      wire::RelayDial dial;
      NINF_RETURN_IF_ERROR(ch.RecvMessage(h, &dial));
      if (Status st = Dial(dial.token()); !st.ok())  // that client is told by the relay's timeout
        spdlog::warn("event=relay_dial_failed relay={} error={}", config_.relay.Key(),
                     daemon::Quoted(st.ToString()));
    } else if (h.type == FRAME_ERROR) {
      wire::Error error;
      NINF_RETURN_IF_ERROR(ch.RecvMessage(h, &error));
      // A code from the wire: one this version does not know reads as
      // NINF_ERR_SERVER, never as an enum value outside the list.
      return Status(ErrorFromWire(error.code()), "the relay said: " + error.message());
    } else {
      return Status(NINF_ERR_PROTOCOL,
                    std::string("unexpected frame from the relay: ") + FrameTypeName(h.type));
    }
  }
}

Status RelayLink::Dial(const std::string &token) {
  int raw = -1;
  NINF_RETURN_IF_ERROR(ConnectTcp(config_.relay.host, config_.relay.port, kRelayTimeoutMs, &raw));
  daemon::UniqueFd fd(raw);
  if (!keys_.keys.empty()) {
    // The key that registered this server goes with its token: a token read
    // off the control link joins nothing. The exchange runs on a copy of the
    // descriptor that the channel closes; the socket stays fd's.
    const int copy = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, 0);
    if (copy < 0) return Status(NINF_ERR_SERVER, std::string("dup: ") + std::strerror(errno));
    Channel auth_ch(copy, kRelayTimeoutMs);
    NINF_RETURN_IF_ERROR(auth::AuthenticateToServer(auth_ch, keys_.keys[0]));
  }
  wire::RelayData data;
  data.set_token(token);
  std::string frame;
  AppendFrame(&frame, FRAME_RELAY_DATA, &data);
  NINF_RETURN_IF_ERROR(SendAll(fd.get(), frame));
  // What Listener gives Server::Accept: non-blocking, close-on-exec, no Nagle.
  const int one = 1;
  (void)::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) < 0 ||
      ::fcntl(fd.get(), F_SETFD, FD_CLOEXEC) < 0)
    return Status(NINF_ERR_SERVER, std::string("fcntl: ") + std::strerror(errno));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return Status::Ok();
    dialed_.push_back(std::move(fd));
  }
  uv_async_send(&async_);
  return Status::Ok();
}

}  // namespace ninf::server
