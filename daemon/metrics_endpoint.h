// The Prometheus endpoint of both daemons (`metrics` setting, off by
// default): GET /metrics answers with the text `render` gives of the
// daemon's state at that moment.
//
// HTTP is GNU libmicrohttpd's, driven from the daemon's own loop (MHD runs
// no thread of its own): a uv_poll_t watches MHD's epoll fd and a uv_timer_t
// MHD's next timeout, and each calls MHD_run, so `render` runs on the loop
// thread and a scrape never sees a half-updated state. Slow clients cannot
// hold up a scrape: MHD serves every connection from the one loop without
// blocking, closes one idle for kIdleSeconds (a head, or reading a
// response, that stops moving), and opens at most kMaxConnections
// (kMaxPerAddress from one client address; more are closed unanswered).
// A client that keeps trickling bytes holds its slot, so it is the
// per-address cap that keeps one address from filling the endpoint. The
// port is bound here without SO_REUSEPORT (ListenTcp): a second daemon
// given the same port fails to start.
//
//   ListenTcp ─fd─> MHD ─ poll/timer on the loop ─ MHD_run ─ Answer ─ render
#pragma once

#include <uv.h>

#include <cstddef>
#include <functional>
#include <string>

#include "protocol/address.h"
#include "protocol/status.h"

struct MHD_Daemon;
struct MHD_Connection;

namespace ninf::daemon {

// Parses a `metrics` setting (ninfd's and ninf-meta's): "PORT" (on
// 127.0.0.1) or "HOST:PORT"; port 0 takes any free one. Errors:
// NINF_ERR_INVALID_ARGUMENT naming the setting.
Status ParseMetricsAddress(const std::string &text, HostPort *out);

class MetricsEndpoint {
 public:
  // A connection that sends or takes nothing for this long is closed.
  static constexpr unsigned kIdleSeconds = 2;
  // Connections open at once, and from one client address.
  static constexpr unsigned kMaxConnections = 64;
  static constexpr unsigned kMaxPerAddress = 8;

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

  // Stops serving: closes the listening socket and every connection. The
  // loop must run once more for the handles to close; the object must live
  // until then.
  void Close();

 private:
  static void OnPoll(uv_poll_t *handle, int status, int events);
  static void OnTimer(uv_timer_t *timer);
  // MHD_run, then the timer armed for MHD's next deadline.
  void Run();
  // MHD's callbacks (defined with MHD's types in the .cc).
  struct Callbacks;
  friend struct Callbacks;
  // Queues the response to a request whose head has arrived; false if MHD
  // could not (it then closes the connection).
  bool Answer(MHD_Connection *connection, const std::string &url, const std::string &method);

  uv_loop_t *loop_;
  std::string daemon_;
  std::function<std::string()> render_;
  std::string address_;
  MHD_Daemon *mhd_ = nullptr;
  uv_poll_t poll_{};
  uv_timer_t timer_{};
  bool handles_open_ = false;
};

}  // namespace ninf::daemon
