#include "server/meta_reporter.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "daemon/log.h"
#include "protocol/address.h"
#include "protocol/ask.h"
#include "protocol/auth.h"
#include "protocol/wire.h"

namespace ninf::server {
namespace {

using Clock = std::chrono::steady_clock;

// Also bounds how long Stop() may wait for a connect under way.
constexpr int kMetaTimeoutMs = 2000;
// Reports closer together than this are merged: a burst of calls starting
// and ending costs the metaserver one report, not one per call.
constexpr auto kMinGap = std::chrono::milliseconds(20);

}  // namespace

MetaReporter::MetaReporter(Config config) : config_(std::move(config)) {}

MetaReporter::~MetaReporter() { Stop(); }

void MetaReporter::Start() {
  thread_ = std::thread([this] { Run(); });
}

void MetaReporter::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    if (session_fd_ >= 0) ::shutdown(session_fd_, SHUT_RDWR);  // ends a blocked read
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void MetaReporter::Publish(const wire::LoadReport &load) {
  std::lock_guard<std::mutex> lock(mutex_);
  bool wake = Significant(load, sent_);
  load_ = load;
  if (wake) {
    load_changed_ = true;
    wake_.notify_all();
  }
}

void MetaReporter::UpdateRegistration(const wire::ServerRegistration &registration) {
  std::lock_guard<std::mutex> lock(mutex_);
  double flops = config_.registration.flops_per_second();
  config_.registration = registration;
  config_.registration.set_flops_per_second(flops);
  registration_changed_ = true;
  wake_.notify_all();
}

void MetaReporter::UpdateKeyFile(const std::string &key_file) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (key_file == config_.key_file) return;
  config_.key_file = key_file;
  key_changed_ = true;
  wake_.notify_all();
  if (session_fd_ >= 0) ::shutdown(session_fd_, SHUT_RDWR);  // the next session uses it
}

bool MetaReporter::Significant(const wire::LoadReport &now, const wire::LoadReport &sent) const {
  if (now.running() != sent.running() || now.queued() != sent.queued()) return true;
  // Calls arriving (admission after arrival) will want slots soon.
  if (now.arriving() != sent.arriving() || now.arrival_waiting() != sent.arrival_waiting())
    return true;
  double a = now.work_seconds(), b = sent.work_seconds();
  return std::fabs(a - b) > 0.25 * std::max(a, b) + 1e-3;
}

double MetaReporter::CalibrateFlops(int threads) {
  // A cache-resident product, the inner loop vectorizable: close to what a
  // tuned kernel gets from one core, within a small factor. The function's
  // own measured speed replaces it once it has run (FunctionLoad).
  constexpr int n = 64;
  std::vector<double> a(n * n, 1.0001), b(n * n, 0.9999), c(n * n, 0.0);
  const auto start = Clock::now();
  uint64_t rounds = 0;
  while (Clock::now() - start < std::chrono::milliseconds(50)) {
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < n; ++k) {
        const double aik = a[i * n + k];
        double *ci = &c[i * n];
        const double *bk = &b[k * n];
        for (int j = 0; j < n; ++j) ci[j] += aik * bk[j];
      }
    ++rounds;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  volatile double sink = c[n + 1];  // keeps the product from being optimized away
  (void)sink;
  return 2.0 * n * n * n * static_cast<double>(rounds) / seconds * std::max(1, threads);
}

Status MetaReporter::StartTls(Channel *ch) {
  // Read again at every connect, like the key file: a renewed CA or
  // client certificate needs no restart of the session thread.
  tls::Context ctx;
  NINF_RETURN_IF_ERROR(tls::MakeClientContext(config_.tls, &ctx));
  tls::SslPtr ssl;
  bool plaintext = false;
  Status st = tls::Connect(ctx, ch->fd(), config_.metaserver.host, config_.metaserver.port,
                           kMetaTimeoutMs, &ssl, &plaintext);
  if (plaintext)
    return Status(st.code(),
                  "the metaserver does not speak TLS: unset tls_ca in ninfd's settings, "
                  "or give ninf-meta tls_cert and tls_key");
  if (!st.ok()) return Status(st.code(), "TLS with the metaserver (tls_ca): " + st.message());
  ch->UseTls(std::move(ssl));
  return Status::Ok();
}

std::string MetaReporter::AuthFailureMessage(bool has_key, const std::string &key_file,
                                             const std::string &metaserver,
                                             const std::string &said) {
  const std::string meta = "ninf-meta at " + metaserver;
  if (!has_key)
    return meta +
           " requires a key, and ninfd has none: set key_file in ninfd's settings to a file "
           "whose first key is one of ninf-meta's key_file";
  if (said.find("does not authenticate") != std::string::npos)
    return meta + " has no key_file, and ninfd (key_file " + key_file +
           ") proves itself with its first key: give ninf-meta a key_file holding that key "
           "(its key_file setting, NINF_META_KEY_FILE)";
  return meta + " refused ninfd's key: the first key of ninfd's key_file " + key_file +
         " is not one of ninf-meta's key_file; add it there, or put one of ninf-meta's keys "
         "first in " +
         key_file;
}

void MetaReporter::Run() {
  {
    double flops = CalibrateFlops(config_.threads_per_job);
    std::lock_guard<std::mutex> lock(mutex_);
    config_.registration.set_flops_per_second(flops);
  }
  auto backoff = std::chrono::milliseconds(500);
  for (;;) {
    bool key_refused = false;
    Status st = Session(&key_refused);
    if (config_.tls.ca.empty() && st.message().find("requires TLS") != std::string::npos) {
      // The metaserver's plaintext answer speaks to a client; say what
      // fixes it on this side. Not a key's fault: no TLS session, which
      // docs/metaserver.md files under metaserver_unreachable.
      key_refused = false;
      st = Status(st.code(),
                  "the metaserver requires TLS: set tls_ca in ninfd's settings to the "
                  "CA that signed its certificate (it said: " +
                      st.message() + ")");
    }
    std::unique_lock<std::mutex> lock(mutex_);
    if (stopping_) return;
    const std::string where =
        config_.metaserver.host + ":" + std::to_string(config_.metaserver.port);
    if (key_refused)
      // The metaserver answered: it is reachable, and the fix is a key.
      daemon::RateLimitedWarn(
          "metaserver_auth_failed",
          "event=metaserver_auth_failed metaserver={} error={} metaserver_said={} retry_ms={}",
          where,
          // ninfd's own words, whole (the paths make them longer than a
          // peer's text may be); the metaserver's, cut as any peer's.
          daemon::Quoted(
              AuthFailureMessage(!config_.key_file.empty(), config_.key_file, where, st.message()),
              4096),
          daemon::Quoted(st.message()), backoff.count());
    else
      daemon::RateLimitedWarn("metaserver_unreachable",
                              "event=metaserver_unreachable metaserver={} error={} retry_ms={}",
                              where, daemon::Quoted(st.ToString()), backoff.count());
    // A new key file is worth a try at once.
    wake_.wait_for(lock, backoff, [this] { return stopping_ || key_changed_; });
    if (stopping_) return;
    backoff = key_changed_ ? std::chrono::milliseconds(500)
                           : std::min(backoff * 2, std::chrono::milliseconds(5000));
    key_changed_ = false;
  }
}

Status MetaReporter::Session(bool *key_refused) {
  std::string key_file;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    key_file = config_.key_file;
  }
  auth::KeyRing keys;
  if (!key_file.empty()) NINF_RETURN_IF_ERROR(auth::LoadKeyFile(key_file, &keys));
  int fd = -1;
  NINF_RETURN_IF_ERROR(
      ConnectTcp(config_.metaserver.host, config_.metaserver.port, kMetaTimeoutMs, &fd));
  Channel ch(fd, kMetaTimeoutMs);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return Status::Ok();
    session_fd_ = fd;
  }
  struct Forget {  // the fd closes with the channel: Stop() must not touch it after
    MetaReporter *self;
    ~Forget() {
      std::lock_guard<std::mutex> lock(self->mutex_);
      self->session_fd_ = -1;
    }
  } forget{this};
  if (!config_.tls.ca.empty()) NINF_RETURN_IF_ERROR(StartTls(&ch));
  if (!keys.keys.empty()) {
    Status st = auth::AuthenticateToServer(ch, keys.keys[0]);
    *key_refused = st.code() == NINF_ERR_AUTH;
    NINF_RETURN_IF_ERROR(st);
  }

  return Report(ch, key_refused);
}

Status MetaReporter::Report(Channel &ch, bool *key_refused) {
  bool must_register = true;
  // The first REGISTER's answer ends the key handshake: a keyed metaserver
  // refuses a keyless ninfd there, and a wrong proof is refused there too.
  bool first_request = true;
  std::chrono::milliseconds period(1000);
  uint64_t sequence = 0;
  for (;;) {
    if (must_register) {
      NINF_RETURN_IF_ERROR(Register(ch, first_request, key_refused, &period));
      first_request = false;
      must_register = false;
    }
    wire::LoadReport report;
    switch (WaitToReport(period, &report)) {
      case Next::kStop:
        return Status::Ok();
      case Next::kRegister:
        must_register = true;
        continue;
      case Next::kReport:
        break;
    }
    report.set_sequence(++sequence);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      report.set_servers_version(listed_version_);
    }
    wire::MetaAck ack;
    NINF_RETURN_IF_ERROR(Ask(ch, report, &ack));
    TakeListed(ack);
    if (ack.register_again()) must_register = true;
    period = std::chrono::milliseconds(std::max<uint32_t>(50, ack.report_ms()));
    std::this_thread::sleep_for(kMinGap);
  }
}

Status MetaReporter::Register(Channel &ch, bool first_request, bool *key_refused,
                              std::chrono::milliseconds *period) {
  wire::ServerRegistration reg;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    reg = config_.registration;
    registration_changed_ = false;
  }
  wire::MetaAck ack;
  if (Status st = Ask(ch, reg, &ack); !st.ok()) {
    *key_refused = first_request && st.code() == NINF_ERR_AUTH;
    return st;
  }
  TakeListed(ack);
  spdlog::info(
      "event=metaserver_registered metaserver={}:{} server={} site={} functions={} "
      "flops_per_second={:.3g}",
      config_.metaserver.host, config_.metaserver.port, reg.server_id(), daemon::Quoted(reg.site()),
      reg.functions_size(), reg.flops_per_second());
  *period = std::chrono::milliseconds(std::max<uint32_t>(50, ack.report_ms()));
  return Status::Ok();
}

MetaReporter::Next MetaReporter::WaitToReport(std::chrono::milliseconds period,
                                              wire::LoadReport *report) {
  std::unique_lock<std::mutex> lock(mutex_);
  wake_.wait_for(lock, period,
                 [this] { return stopping_ || load_changed_ || registration_changed_; });
  if (stopping_) return Next::kStop;
  if (registration_changed_) return Next::kRegister;
  load_changed_ = false;
  *report = load_;
  sent_ = load_;
  report->set_server_id(config_.registration.server_id());
  return Next::kReport;
}

void MetaReporter::TakeListed(const wire::MetaAck &ack) {
  std::vector<std::string> given(ack.servers().begin(), ack.servers().end());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // The usual case: the version ninfd holds, and no list sent again.
    if (ack.servers_version() != 0 && ack.servers_version() == listed_version_) return;
    listed_version_ = ack.servers_version();
    if (given == listed_given_) return;  // nothing to resolve
  }
  // Data references carry numeric addresses (the client's view of its
  // connection); a server registered by name is listed by its addresses
  // too. Resolved here, off the loop.
  std::set<std::string> listed;
  for (const std::string &address : given) {
    listed.insert(address);
    HostPort hp;
    if (!ParseHostPort(address, HostPort{"", 0}, &hp).ok() || hp.host.empty() || hp.port <= 0)
      continue;
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo *res = nullptr;
    if (::getaddrinfo(hp.host.c_str(), std::to_string(hp.port).c_str(), &hints, &res) != 0)
      continue;
    for (addrinfo *a = res; a; a = a->ai_next)
      if (a->ai_family == AF_INET || a->ai_family == AF_INET6)
        listed.insert(daemon::FormatAddress(a->ai_addr));
    ::freeaddrinfo(res);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  listed_given_ = std::move(given);
  listed_ = std::move(listed);
}

void MetaReporter::RefreshListed() {
  // At most a few reports a second for this, whatever the references ask.
  constexpr auto kRefreshGap = std::chrono::milliseconds(200);
  std::lock_guard<std::mutex> lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (now - last_refresh_ < kRefreshGap) return;
  last_refresh_ = now;
  load_changed_ = true;
  wake_.notify_all();
}

std::set<std::string> MetaReporter::Listed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return listed_;
}

FetchPeers FetchPeersOf(int port, const std::string &unix_path, const MetaReporter *reporter) {
  FetchPeers peers;
  peers.own_port = port;
  peers.own_unix_path = unix_path;
  ifaddrs *list = nullptr;
  if (::getifaddrs(&list) == 0) {
    for (ifaddrs *i = list; i; i = i->ifa_next) {
      if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6))
        continue;
      char ip[INET6_ADDRSTRLEN] = {};
      const void *raw =
          i->ifa_addr->sa_family == AF_INET6
              ? static_cast<const void *>(&reinterpret_cast<sockaddr_in6 *>(i->ifa_addr)->sin6_addr)
              : &reinterpret_cast<sockaddr_in *>(i->ifa_addr)->sin_addr;
      if (::inet_ntop(i->ifa_addr->sa_family, raw, ip, sizeof ip)) peers.local_ips.push_back(ip);
    }
    ::freeifaddrs(list);
  }
  if (reporter) {
    peers.listed = reporter->Listed();
    peers.metaserver = true;
  }
  return peers;
}

}  // namespace ninf::server
