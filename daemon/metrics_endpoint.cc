#include "daemon/metrics_endpoint.h"

#include <microhttpd.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "daemon/listener.h"
#include "daemon/log.h"
#include "daemon/process_metrics.h"
#include "daemon/unique_fd.h"

namespace ninf::daemon {

const char *HealthName(Health health) {
  switch (health) {
    case Health::kReady:
      return "ready";
    case Health::kStarting:
      return "starting";
    case Health::kDraining:
      return "draining";
  }
  return "unknown";
}

namespace {

// The whole of a PEM file. Errors: NINF_ERR_CONFIG naming the file and why.
Status ReadPem(const std::string &setting, const std::string &path, std::string *out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status(NINF_ERR_CONFIG, "metrics over HTTPS: cannot read " + setting + " " + path +
                                       ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  *out = text.str();
  return Status::Ok();
}

}  // namespace

Status MetricsNeedsHttps(const Exposure &e, bool *https) {
  *https = false;
  if (IsLoopbackAddress(e.listen)) return Status::Ok();
  if (e.tls) {
    *https = true;
    return Status::Ok();
  }
  if (e.insecure || e.plaintext) return Status::Ok();
  return Status(NINF_ERR_CONFIG,
                "refusing to serve metrics on " + std::string(e.listen) +
                    " over plain HTTP: a scrape names the users, functions and servers. Give the "
                    "daemon tls_cert and tls_key (the endpoint is then HTTPS with them; "
                    "scripts/site_ca.sh makes a site CA and certificates), serve metrics on "
                    "127.0.0.1 for a local Prometheus, or say --allow-plaintext");
}

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

// MHD's callbacks, with MHD's types (the header names none of them).
struct MetricsEndpoint::Callbacks {
  // Called once the request head has arrived (MHD reads it, within its
  // limits: a head over its memory limit is answered 431 by MHD).
  static MHD_Result OnRequest(void *cls, MHD_Connection *connection, const char *url,
                              const char *method, const char * /*version*/,
                              const char * /*upload_data*/, std::size_t * /*upload_data_size*/,
                              void ** /*request*/) {
    // Answered at once, on the first call: a body (of a POST, say) is not
    // read; MHD closes such a connection after the response. This first
    // call is the head's arrival: its deadline no longer applies.
    auto *self = static_cast<MetricsEndpoint *>(cls);
    if (HeadClock *clock = ClockOf(connection)) clock->head_done = true;
    return self->Answer(connection, url, method) ? MHD_YES : MHD_NO;
  }

  // A connection opened or closed (inside MHD_run or MHD_stop_daemon, on
  // the loop): its head clock starts at the connect, and goes with it.
  static void OnConnection(void *cls, MHD_Connection *connection, void **socket_context,
                           MHD_ConnectionNotificationCode code) {
    auto *self = static_cast<MetricsEndpoint *>(cls);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
      const MHD_ConnectionInfo *info =
          MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
      if (!info) return;  // untimed; MHD's idle timeout still applies
      auto it = self->heads_
                    .insert_or_assign(connection, HeadClock{info->connect_fd, uv_now(self->loop_)})
                    .first;
      *socket_context = &it->second;  // unordered_map entries stay put
      if (self->handles_open_ && !uv_is_active(reinterpret_cast<uv_handle_t *>(&self->head_timer_)))
        (void)uv_timer_start(&self->head_timer_, OnHeadTimer, kHeadCheckMs, kHeadCheckMs);
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
      *socket_context = nullptr;
      self->heads_.erase(connection);
      self->closed_in_run_ = true;
      if (self->heads_.empty() && self->handles_open_) (void)uv_timer_stop(&self->head_timer_);
    }
  }

  static HeadClock *ClockOf(MHD_Connection *connection) {
    const MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? static_cast<HeadClock *>(info->socket_context) : nullptr;
  }

  // MHD's own messages (a connection refused at a limit, a socket error):
  // rate-limited, a flood of refused connects must not flood the log.
  static void Log(void * /*cls*/, const char *format, va_list args) {
    char text[512];
    std::vsnprintf(text, sizeof text, format, args);
    std::string message(text);
    while (!message.empty() && (message.back() == '\n' || message.back() == '\r'))
      message.pop_back();
    RateLimitedInfo("metrics_http", "event=metrics_http message=\"{}\"", message);
  }
};

namespace {

// Queues a response with a body MHD copies; HEAD gets the headers only
// (MHD leaves the body out).
bool Send(MHD_Connection *connection, unsigned status, const char *type, const std::string &body,
          const char *allow = nullptr) {
  MHD_Response *response = MHD_create_response_from_buffer(
      body.size(), const_cast<char *>(body.data()), MHD_RESPMEM_MUST_COPY);
  if (!response) return false;
  bool ok = MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, type) == MHD_YES &&
            (!allow || MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, allow) == MHD_YES);
  ok = ok && MHD_queue_response(connection, status, response) == MHD_YES;
  MHD_destroy_response(response);  // MHD keeps its own reference while it sends
  return ok;
}

}  // namespace

MetricsEndpoint::MetricsEndpoint(uv_loop_t *loop, std::string daemon,
                                 std::function<std::string()> render,
                                 std::function<Health()> health)
    : loop_(loop),
      daemon_(std::move(daemon)),
      render_(std::move(render)),
      health_(std::move(health)) {}

// Close() and a turn of the loop come first (the daemons' shutdown); this
// only stops an MHD whose Start() failed half way.
MetricsEndpoint::~MetricsEndpoint() {
  if (mhd_ && !handles_open_) MHD_stop_daemon(mhd_);
}

Status MetricsEndpoint::Start(const HostPort &at, const MetricsTls *tls) {
  unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
  // MHD reads the PEM text at its start: the options list ends early
  // (MHD_OPTION_END first) when there is no TLS.
  MHD_OptionItem tls_options[] = {
      {MHD_OPTION_END, 0, nullptr}, {MHD_OPTION_END, 0, nullptr}, {MHD_OPTION_END, 0, nullptr}};
  if (tls) {
    NINF_RETURN_IF_ERROR(ReadPem("tls_cert", tls->cert_file, &cert_pem_));
    NINF_RETURN_IF_ERROR(ReadPem("tls_key", tls->key_file, &key_pem_));
    flags |= MHD_USE_TLS;
    tls_options[0] = {MHD_OPTION_HTTPS_MEM_CERT, 0, cert_pem_.data()};
    tls_options[1] = {MHD_OPTION_HTTPS_MEM_KEY, 0, key_pem_.data()};
    https_ = true;
  }
  UniqueFd fd;
  int port = 0;
  if (Status st = ListenTcp(at.host, at.port, &fd, &address_, &port); !st.ok())
    return Status(NINF_ERR_SERVER, "metrics: " + st.message());
  address_ = at.host + ":" + std::to_string(port);
  // No MHD_USE_INTERNAL_POLLING_THREAD: MHD runs only inside MHD_run, on
  // this loop. The socket is MHD's from here (MHD_stop_daemon closes it;
  // should MHD fail to start, it may stay open: the daemon exits then).
  mhd_ = MHD_start_daemon(flags, 0, nullptr, nullptr, &Callbacks::OnRequest, this,
                          // The logger first, or MHD prints what comes before it to stderr.
                          MHD_OPTION_EXTERNAL_LOGGER, &Callbacks::Log, this,  //
                          MHD_OPTION_LISTEN_SOCKET, fd.release(),             //
                          MHD_OPTION_NOTIFY_CONNECTION, &Callbacks::OnConnection, this,
                          MHD_OPTION_CONNECTION_TIMEOUT, kIdleSeconds,         //
                          MHD_OPTION_CONNECTION_LIMIT, kMaxConnections,        //
                          MHD_OPTION_PER_IP_CONNECTION_LIMIT, kMaxPerAddress,  //
                          MHD_OPTION_ARRAY, tls_options, MHD_OPTION_END);
  if (!mhd_) return Status(NINF_ERR_SERVER, "metrics: cannot start the HTTP server on " + address_);
  const MHD_DaemonInfo *info = MHD_get_daemon_info(mhd_, MHD_DAEMON_INFO_EPOLL_FD);
  if (!info || uv_poll_init(loop_, &poll_, info->epoll_fd) != 0)
    return Status(NINF_ERR_SERVER, "metrics: cannot watch the HTTP server on " + address_);
  (void)uv_timer_init(loop_, &timer_);  // only fills the handle in
  (void)uv_timer_init(loop_, &head_timer_);
  poll_.data = this;
  timer_.data = this;
  head_timer_.data = this;
  handles_open_ = true;
  if (uv_poll_start(&poll_, UV_READABLE, OnPoll) != 0)
    return Status(NINF_ERR_SERVER, "metrics: cannot watch the HTTP server on " + address_);
  Run();
  spdlog::info("event=metrics_listening address={} scheme={}", address_, https_ ? "https" : "http");
  return Status::Ok();
}

Status MetricsEndpoint::StartFromSetting(const std::string &setting, Exposure exposure,
                                         const MetricsTls &tls) {
  HostPort at;
  NINF_RETURN_IF_ERROR(ParseMetricsAddress(setting, &at));
  exposure.listen = at.host;
  bool https = false;
  NINF_RETURN_IF_ERROR(MetricsNeedsHttps(exposure, &https));
  return Start(at, https ? &tls : nullptr);
}

void MetricsEndpoint::Close() {
  if (handles_open_) {
    // libuv lets go of the epoll fd here, before MHD closes it.
    uv_close(reinterpret_cast<uv_handle_t *>(&poll_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t *>(&timer_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t *>(&head_timer_), nullptr);
    handles_open_ = false;
  }
  if (mhd_) MHD_stop_daemon(mhd_);  // closes the socket and every connection
  mhd_ = nullptr;
}

void MetricsEndpoint::OnPoll(uv_poll_t *handle, int /*status*/, int /*events*/) {
  // An error on the epoll fd too: MHD_run finds out what it is.
  static_cast<MetricsEndpoint *>(handle->data)->Run();
}

void MetricsEndpoint::OnTimer(uv_timer_t *timer) {
  static_cast<MetricsEndpoint *>(timer->data)->Run();
}

void MetricsEndpoint::OnHeadTimer(uv_timer_t *timer) {
  auto *self = static_cast<MetricsEndpoint *>(timer->data);
  const std::uint64_t now = uv_now(self->loop_);
  bool cut = false;
  for (auto &[connection, clock] : self->heads_) {
    if (clock.head_done || clock.cut || now - clock.since_ms < kHeadSeconds * 1000ull) continue;
    // Shut down, not closed: the fd stays MHD's. MHD sees the end of the
    // stream, closes the connection and frees its slot (NOTIFY_CLOSED).
    (void)::shutdown(clock.fd, SHUT_RDWR);
    clock.cut = true;
    cut = true;
    RateLimitedInfo(
        "metrics_head_timeout",
        "event=metrics_head_timeout seconds={} detail=\"request head not whole in time\"",
        kHeadSeconds);
  }
  // Not inside the loop above: MHD_run erases closed connections' entries.
  if (cut) self->Run();
}

void MetricsEndpoint::Run() {
  if (!mhd_ || !handles_open_) return;
  closed_in_run_ = false;
  (void)MHD_run(mhd_);  // does what is ready, never blocks
  // MHD's next deadline: a connection's idle timeout, or 0 when it has
  // more to do at once (data it left unread); none when it has no
  // connection. At its connection limit MHD stops watching the listening
  // socket, and takes it back only in the MHD_run after the one that freed
  // a slot: without that run, connects would wait in the backlog until
  // some other event came (none, once every connection is gone).
  MHD_UNSIGNED_LONG_LONG ms = 0;
  if (closed_in_run_)
    (void)uv_timer_start(&timer_, OnTimer, 0, 0);
  else if (MHD_get_timeout(mhd_, &ms) == MHD_YES)
    (void)uv_timer_start(&timer_, OnTimer, ms, 0);
  else
    (void)uv_timer_stop(&timer_);
}

bool MetricsEndpoint::Answer(MHD_Connection *connection, const std::string &url,
                             const std::string &method) {
  const bool get = method == MHD_HTTP_METHOD_GET || method == MHD_HTTP_METHOD_HEAD;
  if (!get)
    return Send(connection, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "GET /metrics\n",
                "GET, HEAD");
  if (url == "/metrics") {
    std::string text = render_();
    if (text.empty())
      return Send(connection, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain",
                  daemon_ + " is stopping\n");
    // The process's own figures, the same for every daemon. A /proc file
    // that cannot be read leaves its figures at 0 rather than fail a scrape.
    ProcessStats process;
    (void)ReadProcessStats(&process);
    PrometheusText tail;
    AppendProcessMetrics(process, &tail);
    text += tail.Take();
    return Send(connection, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text);
  }
  if (url == "/healthz") {
    const Health health = health_ ? health_() : Health::kReady;
    return Send(connection, health == Health::kReady ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
                "text/plain", std::string(HealthName(health)) + "\n");
  }
  if (url == "/")
    return Send(connection, MHD_HTTP_OK, "text/plain",
                daemon_ + " metrics: GET /metrics, GET /healthz\n");
  return Send(connection, MHD_HTTP_NOT_FOUND, "text/plain", "GET /metrics or /healthz\n");
}

}  // namespace ninf::daemon
