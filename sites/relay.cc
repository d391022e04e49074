#include "sites/relay.h"

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

// One direction of a pair: bytes read from `from`, written to `to` when due.
struct Direction {
  Pair *pair = nullptr;
  uv_stream_t *from = nullptr, *to = nullptr;
  uv_timer_t timer{};
  uv_shutdown_t shutdown{};
  std::deque<Chunk> queue;
  std::size_t held = 0;  // queued and being written
  int writing = 0;       // writes in flight
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

// An accepted connection, its connection to the target, and the two
// directions between them. Owns itself: deleted when its last handle closes.
class Pair {
 public:
  Pair(uv_loop_t *loop, const RelayConfig *config) : config_(config) {
    for (uv_tcp_t *t : {&down_, &up_}) uv_tcp_init(loop, t);
    Wire(&toward_up_, &down_, &up_);
    Wire(&toward_down_, &up_, &down_);
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
    for (Direction *d : {&toward_up_, &toward_down_})
      uv_close(reinterpret_cast<uv_handle_t *>(&d->timer), OnClosed);
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
  static bool Full(const Direction *d) {
    return d->held > kMaxHeldBytes || Unsent(d) > kMaxUnsentBytes;
  }

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

  // Writes every chunk that is due, in order, and arms the timer for the next.
  static void Flush(Direction *d) {
    if (d->pair->closing_) return;
    const uint64_t now = uv_now(d->timer.loop);
    while (!d->queue.empty() && d->queue.front().due_ms <= now) {
      const Chunk c = d->queue.front();
      d->queue.pop_front();
      auto *w = new WriteRequest{{}, d, c.data, c.len};
      w->req.data = w;
      const uv_buf_t buf = uv_buf_init(c.data, static_cast<unsigned>(c.len));
      ++d->writing;
      if (uv_write(&w->req, d->to, &buf, 1, OnWritten) != 0) {
        --d->writing;
        d->held -= c.len;
        std::free(c.data);
        delete w;
        return d->pair->Close();
      }
    }
    if (!d->queue.empty()) uv_timer_start(&d->timer, OnTimer, d->queue.front().due_ms - now, 0);
    MaybeEnd(d);
  }

  static void OnWritten(uv_write_t *req, int status) {
    WriteRequest *w = static_cast<WriteRequest *>(req->data);
    Direction *d = w->dir;
    --d->writing;
    d->held -= w->len;
    std::free(w->data);
    delete w;
    if (status != 0) return d->pair->Close();
    if (d->held < kMaxHeldBytes / 2 && Unsent(d) <= kMaxUnsentBytes / 2) StartReading(d);
    MaybeEnd(d);
  }

  // After the source's EOF and its last byte: the half-close, passed on.
  static void MaybeEnd(Direction *d) {
    if (!d->eof || d->ending || !d->queue.empty() || d->writing > 0 || d->pair->closing_) return;
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
    for (Direction *d : {&p->toward_up_, &p->toward_down_})
      for (const Chunk &c : d->queue) std::free(c.data);
    delete p;
  }

  const RelayConfig *config_;
  uv_tcp_t down_{}, up_{};  // the accepted side, the target side
  Direction toward_up_, toward_down_;
  uv_connect_t connect_{};
  bool closing_ = false;
  int closed_ = 0;
};

void OnConnection(uv_stream_t *listener, int status) {
  if (status != 0) return;
  auto *p = new Pair(listener->loop, static_cast<const RelayConfig *>(listener->data));
  if (uv_accept(listener, p->down()) != 0) return p->Close();
  p->Connect();
}

}  // namespace

int StartRelaying(uv_tcp_t *listener, const RelayConfig *config) {
  listener->data = const_cast<RelayConfig *>(config);
  return uv_listen(reinterpret_cast<uv_stream_t *>(listener), 128, OnConnection);
}

}  // namespace ninf::sites
