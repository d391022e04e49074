#include "daemon/metrics_endpoint.h"

#include <httplib.h>

#include <chrono>

#include "daemon/log.h"

namespace ninf::daemon {
namespace {

// How long a scrape waits for the loop: a loop busy this long is news the
// scraper learns from the failed scrape.
constexpr auto kRenderWait = std::chrono::seconds(5);

}  // namespace

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

MetricsEndpoint::MetricsEndpoint(uv_loop_t *loop, std::function<std::string()> render)
    : loop_(loop), render_(std::move(render)) {}

// Closed by the server's shutdown; this only makes sure no thread outlives
// the object.
MetricsEndpoint::~MetricsEndpoint() { StopHttp(); }

Status MetricsEndpoint::Start(const HostPort &at) {
  if (int rc = uv_async_init(loop_, &async_, OnAsync); rc != 0)
    return Status(NINF_ERR_SERVER, std::string("metrics: ") + uv_strerror(rc));
  async_.data = this;
  async_open_ = true;
  http_ = std::make_unique<httplib::Server>();
  http_->Get("/metrics", [this](const httplib::Request &, httplib::Response &res) {
    auto promise = std::make_shared<std::promise<std::string>>();
    std::future<std::string> text = promise->get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!closing_) {
        waiting_.push_back(promise);
        uv_async_send(&async_);
      } else {
        promise->set_value("");
      }
    }
    std::string body;
    if (text.wait_for(kRenderWait) == std::future_status::ready) body = text.get();
    if (body.empty()) {
      res.status = 503;
      res.set_content("ninfd is busy or stopping\n", "text/plain");
      return;
    }
    res.set_content(body, "text/plain; version=0.0.4; charset=utf-8");
  });
  http_->Get("/", [](const httplib::Request &, httplib::Response &res) {
    res.set_content("ninfd metrics: GET /metrics\n", "text/plain");
  });
  const int port = at.port == 0 ? http_->bind_to_any_port(at.host.c_str())
                                : (http_->bind_to_port(at.host.c_str(), at.port) ? at.port : -1);
  if (port < 0) return Status(NINF_ERR_SERVER, "cannot listen for metrics at " + at.Key());
  address_ = at.host + ":" + std::to_string(port);
  thread_ = std::thread([this] { http_->listen_after_bind(); });
  spdlog::info("event=metrics_listening address={}", address_);
  return Status::Ok();
}

void MetricsEndpoint::OnAsync(uv_async_t *handle) {
  auto *self = static_cast<MetricsEndpoint *>(handle->data);
  std::vector<std::shared_ptr<std::promise<std::string>>> waiting;
  {
    std::lock_guard<std::mutex> lock(self->mutex_);
    waiting.swap(self->waiting_);
  }
  if (waiting.empty()) return;
  const std::string text = self->render_();
  for (auto &p : waiting) p->set_value(text);
}

void MetricsEndpoint::StopHttp() {
  {
    // Requests waiting for the loop are answered now (503), so that the
    // HTTP thread's workers can finish.
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
    for (auto &p : waiting_) p->set_value("");
    waiting_.clear();
  }
  if (http_) {
    http_->stop();
    if (thread_.joinable()) thread_.join();
    http_.reset();
  }
}

void MetricsEndpoint::Close() {
  StopHttp();
  if (async_open_) {
    uv_close(reinterpret_cast<uv_handle_t *>(&async_), nullptr);
    async_open_ = false;
  }
}

}  // namespace ninf::daemon
