#include "daemon/metrics_endpoint.h"

#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "daemon/connection_policy.h"
#include "daemon/connection_set.h"
#include "daemon/log.h"

namespace ninf::daemon {
namespace {

// Exchanges open at once from one client address: a scraper from elsewhere
// never meets a full endpoint, and one from the same address replaces a
// stalled one.
constexpr std::size_t kMaxPerAddress = 8;

// Writing a response (metrics text can be megabytes) to a reader this slow
// is given up.
constexpr uint64_t kWriteMs = 10000;

// After the response: how long, and how much, to read and drop what the
// peer still sends before closing, so that the close does not reset the
// connection before the peer has read the response.
constexpr uint64_t kLingerMs = 1000;
constexpr std::size_t kMaxDrainBytes = 64 * 1024;

std::string HttpResponse(int status, const char *reason, const std::string &type,
                         const std::string &body, bool with_body, const char *extra = "") {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason +
                    "\r\nContent-Type: " + type +
                    "\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\nConnection: close\r\n" + extra + "\r\n";
  if (with_body) out += body;
  return out;
}

// Where a request head ends ("\r\n\r\n", or bare newlines), or npos.
std::size_t HeadEnd(const std::string &in) {
  std::size_t crlf = in.find("\r\n\r\n");
  std::size_t lf = in.find("\n\n");
  if (crlf != std::string::npos && (lf == std::string::npos || crlf + 2 < lf)) return crlf + 4;
  return lf == std::string::npos ? std::string::npos : lf + 2;
}

}  // namespace

// One HTTP exchange: the request head, the response, the close. Its own
// handles; freed by the endpoint once they are closed.
class MetricsEndpoint::Exchange {
 public:
  enum class Stage { kHead, kWriting, kDraining, kClosed };

  Exchange(MetricsEndpoint *owner, UniqueFd fd, uint64_t id, std::string peer)
      : owner_(owner), fd_(std::move(fd)), id_(id), peer_(std::move(peer)) {}

  // False if libuv cannot watch the socket (nothing was opened then).
  bool Open(uv_loop_t *loop) {
    if (uv_poll_init(loop, &poll_, fd_.get()) != 0) return false;
    (void)uv_timer_init(loop, &timer_);  // only fills the handle in
    poll_.data = this;
    timer_.data = this;
    opened_ms_ = uv_now(loop);
    (void)uv_timer_start(&timer_, OnTimer, kHeadMs, 0);
    Watch(UV_READABLE | UV_DISCONNECT);
    return true;
  }

  void Close() {
    if (stage_ == Stage::kClosed) return;
    stage_ = Stage::kClosed;
    uv_close(reinterpret_cast<uv_handle_t *>(&poll_), OnHandleClosed);
    uv_close(reinterpret_cast<uv_handle_t *>(&timer_), OnHandleClosed);
  }

  // What the replacement policy knows of it. A response that has waited
  // kHeadMs for its reader is a stalled exchange like a head that did.
  ConnectionFacts Facts(uint64_t now) const {
    using Phase = ConnectionFacts::Phase;
    const uint64_t age = now - opened_ms_;
    ConnectionFacts f{.id = id_, .age_ms = age, .opened_seq = id_};
    int unread = 0;
    f.input_waiting =
        stage_ == Stage::kHead && ::ioctl(fd_.get(), FIONREAD, &unread) == 0 && unread > 0;
    switch (stage_) {
      case Stage::kHead:
        f.started = !in_.empty();
        break;
      case Stage::kWriting:
        f.phase = age >= kHeadMs ? Phase::kReading : Phase::kBusy;
        f.started = true;
        break;
      case Stage::kDraining:
        f.phase = Phase::kDraining;
        break;
      case Stage::kClosed:
        f.phase = Phase::kBusy;
        break;
    }
    return f;
  }

  uint64_t id() const { return id_; }
  const std::string &peer() const { return peer_; }
  bool closed() const { return stage_ == Stage::kClosed; }

 private:
  static void OnPoll(uv_poll_t *handle, int status, int events) {
    auto *self = static_cast<Exchange *>(handle->data);
    if (status < 0) return self->Close();
    switch (self->stage_) {
      case Stage::kHead:
        if (events & (UV_READABLE | UV_DISCONNECT)) self->ReadHead();
        break;
      case Stage::kWriting:
        if (events & UV_WRITABLE) self->Flush();
        break;
      case Stage::kDraining:
        if (events & (UV_READABLE | UV_DISCONNECT)) self->Drain();
        break;
      case Stage::kClosed:
        break;
    }
  }

  static void OnTimer(uv_timer_t *timer) {
    auto *self = static_cast<Exchange *>(timer->data);
    if (self->stage_ == Stage::kHead)
      RateLimitedInfo("metrics_timeout", "event=metrics_timeout peer={} ms={}", self->peer_,
                      kHeadMs);
    self->Close();
  }

  static void OnHandleClosed(uv_handle_t *handle) {
    auto *self = static_cast<Exchange *>(handle->data);
    if (--self->open_handles_ > 0) return;
    self->owner_->exchanges_.erase(self);  // frees self: not to be touched below
  }

  void ReadHead() {
    char buf[2048];
    for (;;) {
      const std::size_t room = kMaxHead + 1 - in_.size();
      ssize_t n = ::recv(fd_.get(), buf, std::min(room, sizeof buf), MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n <= 0) return Close();  // an error, or the peer left before its head was whole
      in_.append(buf, static_cast<std::size_t>(n));
      if (std::size_t end = HeadEnd(in_); end != std::string::npos) {
        in_.resize(end);
        return Answer(owner_->Respond(in_));
      }
      if (in_.size() > kMaxHead)
        return Answer(HttpResponse(431, "Request Header Fields Too Large", "text/plain",
                                   "request head over 8 KiB\n", true));
    }
  }

  void Answer(std::string response) {
    out_ = std::move(response);
    stage_ = Stage::kWriting;
    (void)uv_timer_start(&timer_, OnTimer, kWriteMs, 0);
    Flush();
  }

  void Flush() {
    while (sent_ < out_.size()) {
      ssize_t n =
          ::send(fd_.get(), out_.data() + sent_, out_.size() - sent_, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Watch(UV_WRITABLE);
      if (n < 0) return Close();
      sent_ += static_cast<std::size_t>(n);
    }
    out_.clear();
    (void)::shutdown(fd_.get(), SHUT_WR);  // best effort: the peer may be gone
    stage_ = Stage::kDraining;
    (void)uv_timer_start(&timer_, OnTimer, kLingerMs, 0);
    Watch(UV_READABLE | UV_DISCONNECT);
  }

  void Drain() {
    char scratch[4096];
    for (;;) {
      ssize_t n = ::recv(fd_.get(), scratch, sizeof scratch, MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      drained_ += n > 0 ? static_cast<std::size_t>(n) : 0;
      if (n <= 0 || drained_ > kMaxDrainBytes) return Close();
    }
  }

  void Watch(int events) {
    if (stage_ == Stage::kClosed || events == events_) return;
    if (uv_poll_start(&poll_, events, OnPoll) != 0) return Close();
    events_ = events;
  }

  MetricsEndpoint *owner_;
  UniqueFd fd_;
  uint64_t id_;
  std::string peer_;
  uint64_t opened_ms_ = 0;
  uv_poll_t poll_{};
  uv_timer_t timer_{};
  int open_handles_ = 2;
  int events_ = 0;
  Stage stage_ = Stage::kHead;
  std::string in_;
  std::string out_;
  std::size_t sent_ = 0;
  std::size_t drained_ = 0;
};

Status ParseMetricsAddress(const std::string &text, HostPort *out) {
  int port = 0;
  if (text == "0" || ParsePort(text, &port)) {  // 0: any free port (tests)
    *out = HostPort{"127.0.0.1", port};
    return Status::Ok();
  }
  if (ParseHostPort(text, HostPort{"", 0}, out).ok() && out->unix_path.empty()) return Status::Ok();
  if (auto colon = text.rfind(':'); colon != std::string::npos && text.substr(colon + 1) == "0" &&
                                    ParseHostPort(text.substr(0, colon) + ":1", {}, out).ok()) {
    out->port = 0;
    return Status::Ok();
  }
  return Status(NINF_ERR_INVALID_ARGUMENT,
                "metrics = \"" + text + "\": expected PORT or HOST:PORT (e.g. 9464)");
}

MetricsEndpoint::MetricsEndpoint(uv_loop_t *loop, std::string daemon,
                                 std::function<std::string()> render)
    : loop_(loop),
      daemon_(std::move(daemon)),
      render_(std::move(render)),
      listener_(loop,
                [this](UniqueFd fd, const std::string &peer) { Accept(std::move(fd), peer); }) {}

// Close() and a turn of the loop come first (the daemons' shutdown).
MetricsEndpoint::~MetricsEndpoint() = default;

Status MetricsEndpoint::Start(const HostPort &at) {
  if (Status st = listener_.Start(at.host, at.port); !st.ok())
    return Status(NINF_ERR_SERVER, "metrics: " + st.message());
  (void)uv_timer_init(loop_, &retry_);  // only fills the handle in
  retry_.data = this;
  retry_open_ = true;
  address_ = at.host + ":" + std::to_string(listener_.port());
  spdlog::info("event=metrics_listening address={}", address_);
  return Status::Ok();
}

void MetricsEndpoint::Close() {
  listener_.Close();
  waiting_.clear();  // their sockets close unanswered
  if (retry_open_) {
    uv_close(reinterpret_cast<uv_handle_t *>(&retry_), nullptr);
    retry_open_ = false;
  }
  std::vector<Exchange *> open;
  for (const auto &[e, owned] : exchanges_) open.push_back(e);
  for (Exchange *e : open) e->Close();
}

void MetricsEndpoint::Accept(UniqueFd fd, const std::string &peer) {
  if (MakeRoom(peer)) return Open(std::move(fd), peer);
  if (waiting_.size() >= kMaxExchanges) {
    RateLimitedWarn("metrics_refused", "event=metrics_refused peer={} reason={}", peer,
                    "too many connections");
    std::string busy = HttpResponse(503, "Service Unavailable", "text/plain",
                                    daemon_ + " metrics: too many connections\n", true);
    (void)::send(fd.get(), busy.data(), busy.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    return;  // fd closes here
  }
  waiting_.push_back({std::move(fd), peer, uv_now(loop_)});
  if (retry_open_ && !uv_is_active(reinterpret_cast<uv_handle_t *>(&retry_)))
    (void)uv_timer_start(&retry_, OnRetry, kRetryMs, kRetryMs);
}

void MetricsEndpoint::OnRetry(uv_timer_t *timer) {
  static_cast<MetricsEndpoint *>(timer->data)->AdmitWaiting();
}

void MetricsEndpoint::AdmitWaiting() {
  // Every one is tried, oldest first: one address's waiting newcomers do
  // not hold up another's.
  const uint64_t now = uv_now(loop_);
  std::deque<Waiting> still;
  for (Waiting &w : waiting_) {
    if (MakeRoom(w.peer)) {
      Open(std::move(w.fd), w.peer);
    } else if (now - w.since_ms >= kHeadMs) {
      RateLimitedWarn("metrics_refused", "event=metrics_refused peer={} reason={}", w.peer,
                      "every exchange is under way");
      std::string busy = HttpResponse(503, "Service Unavailable", "text/plain",
                                      daemon_ + " metrics: too many connections\n", true);
      (void)::send(w.fd.get(), busy.data(), busy.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    } else {
      still.push_back(std::move(w));
    }
  }
  waiting_ = std::move(still);
  if (waiting_.empty()) (void)uv_timer_stop(&retry_);
}

void MetricsEndpoint::Open(UniqueFd fd, const std::string &peer) {
  auto exchange = std::make_unique<Exchange>(this, std::move(fd), next_id_++, peer);
  if (!exchange->Open(loop_)) return;
  Exchange *raw = exchange.get();
  exchanges_.emplace(raw, std::move(exchange));
}

bool MetricsEndpoint::MakeRoom(const std::string &peer) {
  const std::string address = AddressOf(peer);
  std::size_t from_address = 0, open = 0;
  for (const auto &[e, owned] : exchanges_) {
    if (e->closed()) continue;
    ++open;
    from_address += AddressOf(e->peer()) == address;
  }
  const bool address_full = from_address >= kMaxPerAddress;
  if (!address_full && open < kMaxExchanges) return true;
  const uint64_t now = uv_now(loop_);
  std::vector<ConnectionFacts> candidates;
  std::unordered_map<uint64_t, Exchange *> by_id;
  for (const auto &[e, owned] : exchanges_)
    if (!e->closed() && (!address_full || AddressOf(e->peer()) == address)) {
      candidates.push_back(e->Facts(now));
      by_id[e->id()] = e;
    }
  std::optional<uint64_t> victim = ConnectionToReplace(candidates);
  if (!victim) return false;
  by_id.at(*victim)->Close();
  return true;
}

std::string MetricsEndpoint::Respond(const std::string &head) {
  // The request line: METHOD TARGET HTTP/1.x
  const std::string line = head.substr(0, head.find_first_of("\r\n"));
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos || line.compare(sp2 + 1, 7, "HTTP/1.") != 0)
    return HttpResponse(400, "Bad Request", "text/plain", "not an HTTP/1 request line\n", true);
  const std::string method = line.substr(0, sp1);
  std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  target = target.substr(0, target.find('?'));
  const bool head_only = method == "HEAD";
  if (method != "GET" && !head_only)
    return HttpResponse(405, "Method Not Allowed", "text/plain", "GET /metrics\n", true,
                        "Allow: GET, HEAD\r\n");
  if (target == "/metrics") {
    std::string text = render_();
    if (text.empty())
      return HttpResponse(503, "Service Unavailable", "text/plain", daemon_ + " is stopping\n",
                          !head_only);
    return HttpResponse(200, "OK", "text/plain; version=0.0.4; charset=utf-8", text, !head_only);
  }
  if (target == "/")
    return HttpResponse(200, "OK", "text/plain", daemon_ + " metrics: GET /metrics\n", !head_only);
  return HttpResponse(404, "Not Found", "text/plain", "GET /metrics\n", !head_only);
}

}  // namespace ninf::daemon
