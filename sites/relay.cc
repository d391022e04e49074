#include "sites/relay.h"

#include <algorithm>
#include <cstdlib>
#include <deque>

namespace ninf::sites {
namespace {

constexpr std::size_t kReadBytes = 64u << 10;

struct Chunk {
  uint64_t due_ms;  // uv_now() at which it may be written
  char *data;       // malloc'd by OnAlloc
  std::size_t len;
};

class Pair;
class Link;

// One direction of a pair: bytes read from `from`, written to `to` when due
// (and, on a paced link, when its turn comes).
struct Direction {
  Pair *pair = nullptr;
  uv_stream_t *from = nullptr, *to = nullptr;
  uv_timer_t timer{};
  uv_shutdown_t shutdown{};
  std::deque<Chunk> queue;  // held for the delay
  Link *link = nullptr;     // the paced link it shares, or none
  std::deque<Chunk> ready;  // due, waiting for the link's turn
  std::size_t ready_bytes = 0;
  std::size_t deficit = 0;  // what its current turn may still send
  bool in_ring = false;     // waiting for a turn, or in one
  std::size_t held = 0;     // queued, ready and being written
  int writing = 0;          // writes in flight
  bool reading = false;
  bool eof = false;     // the source has ended
  bool ending = false;  // the shutdown of `to` is under way
  bool ended = false;   // ... and done
};

struct WriteRequest {
  uv_write_t req{};
  Direction *dir;
  char *data;
  std::size_t len;
};

// Writes chunk `c` of `d` to its destination. False when the write could
// not start (the pair is closed: `c` is freed).
bool Write(Direction *d, const Chunk &c);
// After a paced direction's turn ended with nothing left: read again, or end.
void AfterSend(Direction *d);

// One direction of the relay as a link of the configured rate, shared by
// every pair: the directions with bytes due take turns of kQuantumBytes
// (deficit round robin), sending while a token bucket at the rate has
// tokens; a timer brings the next tokens.
class Link {
 public:
  Link(uv_loop_t *loop, uint64_t rate_bytes_per_s)
      : per_ms_(static_cast<double>(rate_bytes_per_s) / 1000.0), last_ms_(uv_now(loop)) {
    uv_timer_init(loop, &timer_);
    timer_.data = this;
  }

  // `d` has bytes ready: it joins the ring unless it is in it.
  void Enqueue(Direction *d) {
    if (!d->in_ring) {
      d->in_ring = true;
      ring_.push_back(d);
    }
    Serve();
  }

  // A closing pair's direction leaves the ring.
  void Remove(Direction *d) {
    if (current_ == d) current_ = nullptr;
    ring_.erase(std::remove(ring_.begin(), ring_.end(), d), ring_.end());
    d->in_ring = false;
  }

 private:
  void Refill() {
    uv_update_time(timer_.loop);
    const uint64_t now = uv_now(timer_.loop);
    tokens_ = std::min(tokens_ + static_cast<double>(now - last_ms_) * per_ms_,
                       static_cast<double>(kQuantumBytes));
    last_ms_ = now;
  }

  // Sends what the tokens allow, turn by turn; then waits for more tokens.
  void Serve() {
    Refill();
    while (tokens_ > 0 && (current_ || !ring_.empty())) {
      if (!current_) {
        current_ = ring_.front();
        ring_.pop_front();
        current_->deficit += kQuantumBytes;
      }
      Direction *d = current_;
      while (tokens_ > 0 && !d->ready.empty() && d->ready.front().len <= d->deficit) {
        const Chunk c = d->ready.front();
        d->ready.pop_front();
        d->ready_bytes -= c.len;
        d->deficit -= c.len;
        tokens_ -= static_cast<double>(c.len);
        if (!Write(d, c)) break;  // the pair closed: Remove() ended the turn
      }
      if (current_ != d) continue;
      if (d->ready.empty()) {  // its turn is over with nothing left
        d->deficit = 0;
        d->in_ring = false;
        current_ = nullptr;
        AfterSend(d);
      } else if (d->ready.front().len > d->deficit) {  // its quantum is spent
        ring_.push_back(d);
        current_ = nullptr;
      }
    }
    if ((current_ || !ring_.empty()) && !uv_is_active(reinterpret_cast<uv_handle_t *>(&timer_))) {
      // Tokens for the next chunk come in (1 - tokens) / rate.
      const double wait = (1.0 - tokens_) / per_ms_;
      uv_timer_start(&timer_, OnTimer, static_cast<uint64_t>(wait) + 1, 0);
    }
  }

  static void OnTimer(uv_timer_t *t) { static_cast<Link *>(t->data)->Serve(); }

  double per_ms_;  // bytes a millisecond
  double tokens_ = static_cast<double>(kQuantumBytes);
  uint64_t last_ms_;
  uv_timer_t timer_{};
  std::deque<Direction *> ring_;  // waiting for a turn
  Direction *current_ = nullptr;  // in its turn
};

// What every pair of a listener shares: the configuration and, when paced,
// the two links (toward the target, toward the client).
struct Relay {
  const RelayConfig *config;
  Link *toward_target = nullptr;
  Link *toward_client = nullptr;
};

// An accepted connection, its connection to the target, and the two
// directions between them. Owns itself: deleted when its last handle closes.
class Pair {
 public:
  Pair(uv_loop_t *loop, const Relay *relay) : config_(relay->config) {
    for (uv_tcp_t *t : {&down_, &up_}) uv_tcp_init(loop, t);
    Wire(&toward_up_, &down_, &up_);
    Wire(&toward_down_, &up_, &down_);
    toward_up_.link = relay->toward_target;
    toward_down_.link = relay->toward_client;
  }

  uv_stream_t *down() { return reinterpret_cast<uv_stream_t *>(&down_); }

  void Connect() {
    connect_.data = this;
    if (uv_tcp_connect(&connect_, &up_, reinterpret_cast<const sockaddr *>(&config_->target),
                       OnConnected) != 0)
      Close();
  }

  // Closes both sockets and timers; pending writes are cancelled first.
  void Close() {
    if (closing_) return;
    closing_ = true;
    for (Direction *d : {&toward_up_, &toward_down_}) {
      if (d->link) d->link->Remove(d);
      uv_close(reinterpret_cast<uv_handle_t *>(&d->timer), OnClosed);
    }
    for (uv_tcp_t *t : {&down_, &up_}) uv_close(reinterpret_cast<uv_handle_t *>(t), OnClosed);
  }

 private:
  void Wire(Direction *d, uv_tcp_t *from, uv_tcp_t *to) {
    d->pair = this;
    d->from = reinterpret_cast<uv_stream_t *>(from);
    d->to = reinterpret_cast<uv_stream_t *>(to);
    from->data = d;
    uv_timer_init(from->loop, &d->timer);
    d->timer.data = d;
  }

  static void OnConnected(uv_connect_t *req, int status) {
    Pair *p = static_cast<Pair *>(req->data);
    if (status != 0 || p->closing_) return p->Close();
    // Requests are small and answered at once: no Nagle delay on top of ours.
    uv_tcp_nodelay(&p->down_, 1);
    uv_tcp_nodelay(&p->up_, 1);
    StartReading(&p->toward_up_);
    StartReading(&p->toward_down_);
  }

  static void StartReading(Direction *d) {
    if (d->reading || d->eof || d->pair->closing_) return;
    if (uv_read_start(d->from, OnAlloc, OnRead) != 0) return d->pair->Close();
    d->reading = true;
  }

  // Bytes of due chunks that libuv still holds for `to`: the link is slower than the source.
  static std::size_t Unsent(const Direction *d) { return uv_stream_get_write_queue_size(d->to); }
  // A paced link's bytes due and not yet sent count as the kernel's would.
  static bool Full(const Direction *d) {
    return d->held > kMaxHeldBytes || Unsent(d) + d->ready_bytes > kMaxUnsentBytes;
  }

 public:
  // After bytes left (or a turn ended): reading again once below the bounds.
  static void Resume(Direction *d) {
    if (d->held < kMaxHeldBytes / 2 && Unsent(d) + d->ready_bytes <= kMaxUnsentBytes / 2)
      StartReading(d);
    MaybeEnd(d);
  }

 private:
  static void StopReading(Direction *d) {
    if (!d->reading) return;
    uv_read_stop(d->from);
    d->reading = false;
  }

  static void OnAlloc(uv_handle_t *, std::size_t, uv_buf_t *buf) {
    buf->base = static_cast<char *>(std::malloc(kReadBytes));
    buf->len = buf->base ? kReadBytes : 0;
  }

  static void OnRead(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
    Direction *d = static_cast<Direction *>(stream->data);
    if (nread <= 0) {
      std::free(buf->base);
      if (nread == UV_EOF) {
        StopReading(d);
        d->eof = true;
        MaybeEnd(d);
      } else if (nread < 0) {
        d->pair->Close();
      }
      return;
    }
    // The loop's cached time may be from before this read: refresh it, so
    // that no byte is held for less than the delay.
    uv_update_time(stream->loop);
    const uint64_t now = uv_now(stream->loop);
    d->queue.push_back(
        {now + d->pair->config_->delay_ms, buf->base, static_cast<std::size_t>(nread)});
    d->held += static_cast<std::size_t>(nread);
    if (Full(d)) StopReading(d);
    // A lone chunk arms the timer; later ones are due later and wait behind it.
    if (d->queue.size() == 1) Flush(d);
  }

  static void OnTimer(uv_timer_t *timer) { Flush(static_cast<Direction *>(timer->data)); }

  // Every chunk that is due goes out in order (to its paced link's turn, or
  // written at once); the timer is armed for the next.
  static void Flush(Direction *d) {
    if (d->pair->closing_) return;
    const uint64_t now = uv_now(d->timer.loop);
    bool paced = false;
    while (!d->queue.empty() && d->queue.front().due_ms <= now) {
      const Chunk c = d->queue.front();
      d->queue.pop_front();
      if (d->link) {
        d->ready.push_back(c);
        d->ready_bytes += c.len;
        paced = true;
      } else if (!Write(d, c)) {
        return;
      }
    }
    if (!d->queue.empty()) uv_timer_start(&d->timer, OnTimer, d->queue.front().due_ms - now, 0);
    if (paced) return d->link->Enqueue(d);
    MaybeEnd(d);
  }

 public:
  static bool Write(Direction *d, const Chunk &c) {
    auto *w = new WriteRequest{{}, d, c.data, c.len};
    w->req.data = w;
    const uv_buf_t buf = uv_buf_init(c.data, static_cast<unsigned>(c.len));
    ++d->writing;
    if (uv_write(&w->req, d->to, &buf, 1, OnWritten) != 0) {
      --d->writing;
      d->held -= c.len;
      std::free(c.data);
      delete w;
      d->pair->Close();
      return false;
    }
    return true;
  }

 private:
  static void OnWritten(uv_write_t *req, int status) {
    WriteRequest *w = static_cast<WriteRequest *>(req->data);
    Direction *d = w->dir;
    --d->writing;
    d->held -= w->len;
    std::free(w->data);
    delete w;
    if (status != 0) return d->pair->Close();
    Resume(d);
  }

  // After the source's EOF and its last byte: the half-close, passed on.
  static void MaybeEnd(Direction *d) {
    if (!d->eof || d->ending || !d->queue.empty() || !d->ready.empty() || d->writing > 0 ||
        d->pair->closing_)
      return;
    d->ending = true;
    d->shutdown.data = d;
    if (uv_shutdown(&d->shutdown, d->to, OnShutdown) != 0) d->pair->Close();
  }

  static void OnShutdown(uv_shutdown_t *req, int status) {
    Direction *d = static_cast<Direction *>(req->data);
    d->ended = true;
    Pair *p = d->pair;
    if (status != 0 || (p->toward_up_.ended && p->toward_down_.ended)) p->Close();
  }

  static void OnClosed(uv_handle_t *handle) {
    // Every handle's data is a direction: the one a socket feeds, a timer's own.
    Pair *p = static_cast<Direction *>(handle->data)->pair;
    if (++p->closed_ < 4) return;
    for (Direction *d : {&p->toward_up_, &p->toward_down_}) {
      for (const Chunk &c : d->queue) std::free(c.data);
      for (const Chunk &c : d->ready) std::free(c.data);
    }
    delete p;
  }

  const RelayConfig *config_;
  uv_tcp_t down_{}, up_{};  // the accepted side, the target side
  Direction toward_up_, toward_down_;
  uv_connect_t connect_{};
  bool closing_ = false;
  int closed_ = 0;
};

bool Write(Direction *d, const Chunk &c) { return Pair::Write(d, c); }
void AfterSend(Direction *d) { Pair::Resume(d); }

void OnConnection(uv_stream_t *listener, int status) {
  if (status != 0) return;
  auto *p = new Pair(listener->loop, static_cast<const Relay *>(listener->data));
  if (uv_accept(listener, p->down()) != 0) return p->Close();
  p->Connect();
}

}  // namespace

int StartRelaying(uv_tcp_t *listener, const RelayConfig *config) {
  // Lives as long as the listener: the process.
  auto *relay = new Relay{config};
  if (config->rate_bytes_per_s > 0) {
    relay->toward_target = new Link(listener->loop, config->rate_bytes_per_s);
    relay->toward_client = new Link(listener->loop, config->rate_bytes_per_s);
  }
  listener->data = relay;
  return uv_listen(reinterpret_cast<uv_stream_t *>(listener), 128, OnConnection);
}

}  // namespace ninf::sites
