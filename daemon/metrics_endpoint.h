// The Prometheus endpoint of both daemons (`metrics` setting, off by
// default): GET /metrics answers with the text `render` gives of the
// daemon's state at that moment, followed by the process_* metrics
// (process_metrics.h); GET /healthz answers 200 "ready" or 503 "starting" /
// "draining" from `health`, for a load balancer or an orchestrator's
// readiness probe (a draining ninfd finishes its calls but takes no new
// ones: it must leave the rotation before it exits).
//
// HTTP is GNU libmicrohttpd's, driven from the daemon's own loop (MHD runs
// no thread of its own): a uv_poll_t watches MHD's epoll fd and a uv_timer_t
// MHD's next timeout, and each calls MHD_run, so `render` runs on the loop
// thread and a scrape never sees a half-updated state; MHD's callbacks run
// inside MHD_run, on the loop too, so nothing here needs a lock. Slow
// clients cannot hold up a scrape: MHD serves every connection from the one
// loop without blocking, closes one idle for kIdleSeconds (a head, or
// reading a response, that stops moving), and opens at most
// kMaxConnections (further connects wait in the listen backlog for a free
// one) and kMaxPerAddress from one client address (more are closed
// unanswered). MHD's timeout is one of idleness, so a client
// trickling a header line every second would keep its slot for good: the
// endpoint therefore times each request head itself (NOTIFY_CONNECTION
// tracks each connection, the first call of the access handler marks its
// head done) and shuts down a connection whose head is not whole
// kHeadSeconds after its connect. A connection carries one request (MHD
// closes it after a response queued on the head's call), so this is every
// head's deadline, and a slow sender holds a slot for at most that long. The
// port is bound here without SO_REUSEPORT (ListenTcp): a second daemon
// given the same port fails to start.
//
//   ListenTcp ─fd─> MHD ─ poll/timer on the loop ─ MHD_run ─ Answer ─ render
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

#include "daemon/exposure.h"
#include "protocol/address.h"
#include "protocol/status.h"

struct MHD_Daemon;
struct MHD_Connection;

namespace ninf::daemon {

// What /healthz reports: serving, not yet, or finishing its calls before it
// exits (SIGTERM's grace period).
enum class Health { kReady, kStarting, kDraining };

// "ready", "starting", "draining": the /healthz body.
const char *HealthName(Health health);

// Parses a `metrics` setting (ninfd's and ninf-meta's): "PORT" (on
// 127.0.0.1) or "HOST:PORT"; port 0 takes any free one. Errors:
// NINF_ERR_INVALID_ARGUMENT naming the setting.
Status ParseMetricsAddress(const std::string &text, HostPort *out);

// How an endpoint at `e.listen` is served, given the daemon's TLS and waivers:
// on loopback, HTTP (a local Prometheus or agent); beyond it, HTTPS with the
// daemon's own certificate when it has one (`tls`); otherwise HTTP only if
// the operator said so (`insecure`, `allow_plaintext`), since the scrape
// names users, functions and servers. Errors: NINF_ERR_CONFIG saying what
// to set.
Status MetricsNeedsHttps(const Exposure &e, bool *https);

// The daemon's certificate and key for an HTTPS endpoint (PEM files).
struct MetricsTls {
  std::string cert_file;
  std::string key_file;
};

class MetricsEndpoint {
 public:
  // A connection that sends or takes nothing for this long is closed.
  static constexpr unsigned kIdleSeconds = 2;
  // Connections open at once, and from one client address.
  static constexpr unsigned kMaxConnections = 64;
  static constexpr unsigned kMaxPerAddress = 8;
  // A request head must be whole this long after the connect, idle or not.
  static constexpr unsigned kHeadSeconds = 2;
  // How often heads are checked against that deadline (while any is open).
  static constexpr unsigned kHeadCheckMs = 250;

  // `render` and `health` run on `loop`'s thread; `daemon` names it in the
  // index page. A null `health` is always ready.
  MetricsEndpoint(uv_loop_t *loop, std::string daemon, std::function<std::string()> render,
                  std::function<Health()> health = nullptr);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint &) = delete;
  MetricsEndpoint &operator=(const MetricsEndpoint &) = delete;

  // Binds `at` (port 0: any free one) and starts serving, over HTTPS when
  // `tls` is given. Errors: NINF_ERR_SERVER naming the address (in use,
  // cannot be resolved); NINF_ERR_CONFIG for certificate files it cannot
  // read.
  Status Start(const HostPort &at, const MetricsTls *tls = nullptr);
  // The daemons' start: parses the `metrics` setting (ParseMetricsAddress),
  // chooses HTTP or HTTPS (MetricsNeedsHttps, with `exposure`'s address
  // replaced by the endpoint's) and starts there.
  Status StartFromSetting(const std::string &setting, Exposure exposure, const MetricsTls &tls);
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
  // Shuts down every connection whose head is past kHeadSeconds.
  static void OnHeadTimer(uv_timer_t *timer);
  // MHD's callbacks (defined with MHD's types in the .cc).
  struct Callbacks;
  friend struct Callbacks;
  // Queues the response to a request whose head has arrived; false if MHD
  // could not (it then closes the connection).
  bool Answer(MHD_Connection *connection, const std::string &url, const std::string &method);

  uv_loop_t *loop_;
  std::string daemon_;
  std::function<std::string()> render_;
  std::function<Health()> health_;
  std::string address_;
  bool https_ = false;
  // The PEM text MHD reads at its start (kept for the daemon's life, as MHD
  // may refer to it).
  std::string cert_pem_, key_pem_;
  MHD_Daemon *mhd_ = nullptr;
  uv_poll_t poll_{};
  uv_timer_t timer_{};
  uv_timer_t head_timer_{};
  bool handles_open_ = false;
  // A connection closed during this MHD_run (Run runs MHD once more).
  bool closed_in_run_ = false;
  // Each open connection's head clock (MHD's socket_context points at its
  // entry); at most kMaxConnections, MHD's NOTIFY_CLOSED erases them.
  struct HeadClock {
    int fd;
    std::uint64_t since_ms;  // uv_now at the connect
    bool head_done = false;
    bool cut = false;  // shut down, MHD has yet to close it
  };
  std::unordered_map<MHD_Connection *, HeadClock> heads_;
};

}  // namespace ninf::daemon
