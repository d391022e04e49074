// The Prometheus endpoint of both daemons (`metrics` setting, off by
// default): GET /metrics answers with the text `render` gives of the
// daemon's state at that moment.
//
// Served on the daemon's own loop (no thread, no worker pool a slow client
// could exhaust): an exchange is one HTTP/1.1 request on a connection that
// then closes. A request's head must arrive whole within kHeadMs of the
// connect (a scrape sends it at once; a client sending one header line per
// second is cut off), at most kMaxExchanges are open (8 per client
// address), and a newcomer over that replaces the oldest one that stalled
// in its head (the same policy as the daemons' connections,
// connection_policy.h). When none can go yet (they have just connected and
// their bytes are not read), the newcomer waits, its socket unread, and is
// tried again every kRetryMs until kHeadMs have passed (then 503). The port
// is bound without SO_REUSEPORT: a second daemon given the same port fails
// to start.
//
//   listener ─accept─> Exchange: read the head ─ render on the loop ─ write ─ close
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "daemon/listener.h"
#include "daemon/unique_fd.h"
#include "protocol/address.h"
#include "protocol/status.h"

namespace ninf::daemon {

// Parses a `metrics` setting (ninfd's and ninf-meta's): "PORT" (on
// 127.0.0.1) or "HOST:PORT"; port 0 takes any free one. Errors:
// NINF_ERR_INVALID_ARGUMENT naming the setting.
Status ParseMetricsAddress(const std::string &text, HostPort *out);

class MetricsEndpoint {
 public:
  // A request head is read within this long of the connect, or the
  // connection is closed.
  static constexpr uint64_t kHeadMs = 2000;
  // Exchanges open at once.
  static constexpr std::size_t kMaxExchanges = 64;
  // Largest request head (a scrape's is a few hundred bytes).
  static constexpr std::size_t kMaxHead = 8192;
  // How often a waiting newcomer is tried again.
  static constexpr uint64_t kRetryMs = 50;

  // `render` runs on `loop`'s thread; `daemon` names it in the index page.
  MetricsEndpoint(uv_loop_t *loop, std::string daemon, std::function<std::string()> render);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint &) = delete;
  MetricsEndpoint &operator=(const MetricsEndpoint &) = delete;

  // Binds `at` (port 0: any free one) and starts serving. Errors:
  // NINF_ERR_SERVER naming the address (in use, cannot be resolved).
  Status Start(const HostPort &at);
  // "host:port" it listens on.
  const std::string &address() const { return address_; }

  // Stops accepting and closes every exchange. The loop must run once more
  // for the handles to close; the object must live until then.
  void Close();

 private:
  class Exchange;
  friend class Exchange;

  void Accept(UniqueFd fd, const std::string &peer);
  // Opens the exchange of a newcomer that has room.
  void Open(UniqueFd fd, const std::string &peer);
  // Tries the waiting newcomers again, oldest first (the retry timer).
  void AdmitWaiting();
  static void OnRetry(uv_timer_t *timer);
  // Room for one more exchange from `peer`: replaces the oldest stalled
  // one (of its address, when that is what is full) if need be.
  bool MakeRoom(const std::string &peer);
  // The response to a complete head.
  std::string Respond(const std::string &head);

  uv_loop_t *loop_;
  std::string daemon_;
  std::function<std::string()> render_;
  Listener listener_;
  std::string address_;
  uint64_t next_id_ = 1;
  std::unordered_map<Exchange *, std::unique_ptr<Exchange>> exchanges_;
  // Newcomers that found no room yet, oldest first (at most kMaxExchanges).
  struct Waiting {
    UniqueFd fd;
    std::string peer;
    uint64_t since_ms;
  };
  std::deque<Waiting> waiting_;
  uv_timer_t retry_{};
  bool retry_open_ = false;
};

}  // namespace ninf::daemon
