// The Prometheus endpoint of ninfd (`metrics` setting, off by default):
// GET /metrics answers with FormatPrometheus (metrics_text.h) of the
// daemon's state at that moment.
//
// cpp-httplib serves HTTP on a thread of its own; the daemon's state
// belongs to the event loop. So a request asks the loop (uv_async) and
// waits for its answer: the text is always rendered on the loop, and the
// HTTP thread never touches the daemon's objects.
//
//   HTTP thread: GET /metrics ─ queue a promise, uv_async_send ─ wait (5 s)
//   loop:        OnAsync ─ render once ─ fulfil every queued promise
#pragma once

#include <uv.h>

#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protocol/address.h"
#include "protocol/status.h"

namespace httplib {
class Server;
}

namespace ninf::daemon {

// Parses a `metrics` setting (ninfd's and ninf-meta's): "PORT" (on
// 127.0.0.1) or "HOST:PORT"; port 0 takes any free one. Errors:
// NINF_ERR_INVALID_ARGUMENT naming the setting.
Status ParseMetricsAddress(const std::string &text, HostPort *out);

class MetricsEndpoint {
 public:
  // `render` runs on `loop`'s thread.
  MetricsEndpoint(uv_loop_t *loop, std::function<std::string()> render);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint &) = delete;
  MetricsEndpoint &operator=(const MetricsEndpoint &) = delete;

  // Binds `at` (port 0: any free one) and starts serving. Errors:
  // NINF_ERR_SERVER naming the address.
  Status Start(const HostPort &at);
  // "host:port" it listens on.
  const std::string &address() const { return address_; }

  // Stops serving and joins the HTTP thread; requests waiting get 503. The
  // loop must run once more for the async handle to close.
  void Close();

 private:
  static void OnAsync(uv_async_t *handle);
  void StopHttp();

  uv_loop_t *loop_;
  std::function<std::string()> render_;
  std::unique_ptr<httplib::Server> http_;
  std::thread thread_;
  uv_async_t async_{};
  bool async_open_ = false;
  std::string address_;
  std::mutex mutex_;
  std::vector<std::shared_ptr<std::promise<std::string>>> waiting_;  // under mutex_
  bool closing_ = false;                                             // under mutex_
};

}  // namespace ninf::daemon
