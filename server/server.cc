// Server: lifecycle, accepting, connection events, stats, reload and
// shutdown. (The requests are in server_requests.cc; the calls themselves in
// the scheduler, scheduler.h.)
#include "server/server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "daemon/exposure.h"
#include "daemon/listener_tls.h"
#include "daemon/log.h"
#include "daemon/loop_handles.h"
#include "ninf.pb.h"
#include "server/client_connection.h"
#include "server/metrics_text.h"

#ifndef NINF_VERSION
#define NINF_VERSION "unknown"
#endif

namespace ninf::server {

Server::Server(uv_loop_t *loop, const Settings &settings, Registry registry, int cores)
    : loop_(loop),
      settings_(settings),
      registry_(std::move(registry)),
      cores_(cores),
      users_(settings_),
      kept_(settings_, users_, started_at_),
      listener_(loop, [this](daemon::UniqueFd fd,
                             const std::string &peer) { Accept(std::move(fd), peer, true); }),
      unix_listener_(loop, [this](daemon::UniqueFd fd,
                                  const std::string &peer) { Accept(std::move(fd), peer, false); }),
      connections_(loop),
      scheduler_(loop, settings_, registry_, cores, &counters_, started_at_, users_, &kept_, this) {
  (void)uv_timer_init(loop_, &grace_timer_);  // only fills the handle in
  grace_timer_.data = this;
  grace_timer_open_ = true;
  (void)uv_timer_init(loop_, &watch_timer_);
  watch_timer_.data = this;
  watch_timer_open_ = true;
}

Server::~Server() = default;

Status Server::Start() {
  const Admission &admission = scheduler_.desk().admission();
  NINF_RETURN_IF_ERROR(LoadKeys());
  NINF_RETURN_IF_ERROR(LoadTls());
  NINF_RETURN_IF_ERROR(CheckLaunches(settings_, cores_));
  for (const std::string &name : WarmAtStartNames(settings_))
    if (!registry_.Find(name))
      return Status(NINF_ERR_INVALID_ARGUMENT,
                    "warm_at_start names '" + name +
                        "', which this server's registry does not serve (no NAME.interface of "
                        "that name in its registry folders)");
  if (settings_.reverse) {
    // No TCP port at all: clients reach this server only through the
    // relay, which anyone who reaches the relay can use.
    NINF_RETURN_IF_ERROR(StartRelayLink());
  } else {
    NINF_RETURN_IF_ERROR(daemon::CheckExposure(Exposed()));
    NINF_RETURN_IF_ERROR(listener_.Start(settings_.listen, static_cast<int>(settings_.port)));
  }
  NINF_RETURN_IF_ERROR(StartUnixListener());
  if (!settings_.launch_address.empty())
    NINF_RETURN_IF_ERROR(scheduler_.executables().OpenLaunchBroker());
  if (!settings_.metrics.empty()) NINF_RETURN_IF_ERROR(StartMetrics());
  spdlog::info(
      "event=listening address={} port={} registry={} functions={} cores={} slots={} "
      "thread_budget={} threads_per_job={} queue_order={} queue_limit={} max_call_bytes={} "
      "warm_executables={} pid={} version={}",
      listener_.address(), listener_.port(), daemon::Quoted(registry_.dir()), registry_.size(),
      cores_, admission.slots(), ThreadBudgetName(admission.config().budget),
      LoneCallThreads(admission.config()), QueueOrderName(admission.config().order),
      settings_.queue_limit, settings_.max_call_bytes, settings_.warm_executables, ::getpid(),
      NINF_VERSION);
  if (tls_)
    spdlog::info("event=tls state=on cert={} client_ca={}", daemon::Quoted(settings_.tls_cert),
                 daemon::Quoted(settings_.tls_client_ca));
  if (users_.keyed())
    spdlog::info("event=authentication state=on key_file={} keys={} users={}",
                 daemon::Quoted(users_.ring().path), users_.ring().keys.size(),
                 settings_.users.size() + (settings_.key_file.empty() ? 0 : 1));
  else if (!daemon::IsLoopbackAddress(settings_.listen))
    spdlog::warn("event=authentication state=off address={} reason=insecure message={}",
                 daemon::Quoted(settings_.listen),
                 daemon::Quoted("anyone who reaches this port may run the registry's functions"));
  const SchedulerConfig &sc = admission.config();
  if (sc.budget == ThreadBudget::kFixed && sc.fixed_threads * sc.slots > cores_)
    spdlog::warn("event=oversubscribed slots={} threads_per_job={} cores={}", sc.slots,
                 sc.fixed_threads, cores_);
  StartWatchdog();
  NINF_RETURN_IF_ERROR(StartMetaReporter());
  // Where its calls may read kept data from (fetch_policy.h): asked per
  // data reference; a stale metaserver list is refreshed on a miss.
  kept_.set_fetch_peers(
      [this] { return FetchPeersOf(listener_.port(), unix_path_, reporter_.get()); },
      [this] {
        if (reporter_) reporter_->RefreshListed();
      });
  // Their first calls find an executable waiting (names checked above).
  scheduler_.executables().WarmAtStart(WarmAtStartNames(settings_));
  NINF_RETURN_IF_ERROR(daemon::WritePortFile(settings_.ready_file, listener_.port()));
  ready_ = true;
  return Status::Ok();
}

Status Server::StartUnixListener() {
  if (settings_.unix_socket.empty()) return Status::Ok();
  const bool automatic = settings_.unix_socket == "auto";
  if (automatic && settings_.reverse) return Status::Ok();  // no port to name it after
  const std::string path = automatic ? "/tmp/ninfd-" + std::to_string(listener_.port()) + ".sock"
                                     : settings_.unix_socket;
  Status st = unix_listener_.StartUnix(path);
  if (!st.ok() && automatic) {
    spdlog::warn("event=unix_socket_unavailable path={} error={} message={}", daemon::Quoted(path),
                 daemon::Quoted(st.message()), daemon::Quoted("same-host clients will use TCP"));
    return Status::Ok();
  }
  NINF_RETURN_IF_ERROR(st);
  unix_path_ = path;
  spdlog::info("event=listening address={}", unix_listener_.address());
  return Status::Ok();
}

Status Server::LoadTls() {
  NINF_RETURN_IF_ERROR(daemon::LoadListenerTls(
      {.cert = settings_.tls_cert, .key = settings_.tls_key, .client_ca = settings_.tls_client_ca},
      &tls_));
  if (settings_.tls_cert.empty()) return Status::Ok();
  // The first client's handshake would otherwise seed the DRBG and fetch
  // X25519, HKDF and AES-GCM (tls::WarmUp).
  tls::WarmUp();
  return Status::Ok();
}

void Server::Accept(daemon::UniqueFd fd, const std::string &peer, bool tcp) {
  if (stopping_) return;  // fd closes here
  const daemon::ConnectionSet::Limits limits{
      .total = static_cast<std::size_t>(settings_.max_connections),
      .per_address = static_cast<std::size_t>(settings_.max_connections_per_client)};
  if (Status room = connections_.MakeRoom(peer, limits, users_.keyed()); !room.ok()) {
    daemon::RefuseConnection(std::move(fd), peer, room, tcp && tls_ != nullptr);
    return;
  }
  uint64_t id = next_connection_id_++;
  daemon::Connection::Timeouts timeouts;
  timeouts.idle_ms = static_cast<uint64_t>(settings_.idle_timeout_seconds) * 1000;
  timeouts.request_ms = static_cast<uint64_t>(settings_.request_timeout_seconds) * 1000;
  // Until it has proved it holds a key, a connection gets no longer to
  // start a request than to finish one.
  if (users_.keyed()) timeouts.idle_ms = std::min(timeouts.idle_ms, timeouts.request_ms);
  // A ClientConnection: a call over TLS is handed over (client_connection.h).
  std::unique_ptr<ClientConnection> conn =
      daemon::Connection::Open<ClientConnection>(loop_, std::move(fd), id, peer, this, timeouts,
                                                 NinfdRequestRules(), tcp ? tls_ : tls::Context());
  if (!conn) return;
  connections_.Add(std::move(conn));
  ++counters_.connections_accepted;
  spdlog::debug("event=connect conn={} peer={} connections={}", id, peer, connections_.size());
}

void Server::OnProtocolError(daemon::Connection &conn, const Status &st) {
  ++counters_.protocol_errors;
  daemon::RateLimitedWarn("protocol_error", "event=protocol_error conn={} peer={} code={} error={}",
                          conn.id(), conn.peer(), st.code(), daemon::Quoted(st.message()));
}

std::string Server::StatsText(const std::string *only_user) const {
  return FormatStats(CurrentGauges(), counters_, only_user);
}

Gauges Server::CurrentGauges() const {
  const Admission &admission = scheduler_.desk().admission();
  Gauges g;
  g.version = NINF_VERSION;
  g.pid = ::getpid();
  g.uptime_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at_).count();
  g.cores = cores_;
  g.slots = admission.slots();
  g.threads_per_job = LoneCallThreads(admission.config());
  g.thread_budget = ThreadBudgetName(admission.config().budget);
  g.queue_order = QueueOrderName(admission.config().order);
  g.connections = connections_.size();
  g.queue_limit = admission.queue_limit();
  g.max_call_bytes = static_cast<uint64_t>(settings_.max_call_bytes);
  g.functions = registry_.size();
  g.served = registry_.Names();
  g.warm_executables = static_cast<uint64_t>(settings_.warm_executables);
  scheduler_.AddGauges(&g);
  double load[1] = {0};
  if (::getloadavg(load, 1) == 1) g.load_average_1 = load[0];
  kept_.AddGauges(&g);
  for (const std::string &label : counters_.user_labels) {
    const std::string user = label == "-" ? std::string() : label;
    g.users.push_back({.name = label,
                       .running = admission.running_of(user),
                       .queued = admission.queued_of(user),
                       .store_bytes = kept_.BytesOf(user)});
  }
  // The users past the label bound share one row of counters, no gauges.
  if (counters_.users.count("other") && !counters_.user_labels.count("other"))
    g.users.push_back({.name = "other"});
  return g;
}

daemon::Exposure Server::Exposed() const {
  return {.listen = settings_.listen,
          .key = users_.keyed(),
          .tls = !settings_.tls_cert.empty(),
          .insecure = settings_.insecure,
          .plaintext = settings_.allow_plaintext};
}

Status Server::StartMetrics() {
  // /healthz: 503 "draining" from SIGTERM on (the grace period: running
  // calls finish, no new ones are taken), so a balancer takes ninfd out
  // before it exits; "starting" until Start() is through.
  metrics_ = std::make_unique<daemon::MetricsEndpoint>(
      loop_, "ninfd", [this] { return FormatPrometheus(CurrentGauges(), counters_); },
      [this] {
        return stopping_ ? daemon::Health::kDraining
               : ready_  ? daemon::Health::kReady
                         : daemon::Health::kStarting;
      });
  return metrics_->StartFromSetting(settings_.metrics, Exposed(),
                                    {settings_.tls_cert, settings_.tls_key});
}

void Server::OnClosed(daemon::Connection &conn) {
  Job *job = JobOf(conn);
  if (job) job->detach_conn();
  spdlog::debug("event=disconnect conn={} peer={}", conn.id(), conn.peer());
  connections_.Remove(conn);  // frees conn: not to be touched below
  if (job) scheduler_.OnConnectionClosed(*job);
  MaybeStopped();
}

void Server::OnHangup(daemon::Connection &conn) { scheduler_.OnHangup(conn); }

void Server::OnPeerShutWrite(daemon::Connection &conn) { scheduler_.OnPeerShutWrite(conn); }

void Server::OnOutputFlushed(daemon::Connection &conn) { scheduler_.OnOutputFlushed(conn); }

void Server::OnInputArrived(daemon::Connection &conn) { scheduler_.OnInputArrived(conn); }

void Server::ReloadRegistry() {
  Registry fresh;
  std::vector<std::string> warnings;
  std::vector<RegistryOverride> overrides;
  // The same folders: the `registry` setting itself needs a restart.
  Status st = Registry::Load(registry_.folders(), &fresh, &warnings, &overrides);
  for (const std::string &w : warnings)
    spdlog::warn("event=registry_skip message={}", daemon::Quoted(w));
  LogOverrides(overrides);
  if (!st.ok()) {
    spdlog::error("event=reload_failed registry={} error={}", daemon::Quoted(registry_.dir()),
                  daemon::Quoted(st.message()));
    scheduler_.executables().pool().Clear();
    scheduler_.executables().WarmAtStart(WarmAtStartNames(settings_));  // the registry in use
    scheduler_.PolicyChanged();
    return;
  }
  registry_ = std::move(fresh);
  if (reporter_) reporter_->UpdateRegistration(Registration());
  scheduler_.executables().pool().Clear();
  for (const std::string &name : scheduler_.executables().WarmAtStart(WarmAtStartNames(settings_)))
    spdlog::warn("event=warm_at_start_unknown function={} message={}", daemon::Quoted(name),
                 daemon::Quoted("the reloaded registry does not serve it: nothing started"));
  // A handle's next call is checked against the reloaded users and allow
  // lists when it asks for its slot: none keeps one across a reload.
  scheduler_.PolicyChanged();
  // The key files are read again too: that is how a key is rotated, and a
  // user added or revoked, without a restart (docs/security.md). A bad file
  // keeps the users and keys in use.
  if (Status keys = LoadKeys(); !keys.ok())
    spdlog::error("event=reload_failed key_file={} error={}", daemon::Quoted(settings_.key_file),
                  daemon::Quoted(keys.message()));
  if (reporter_) reporter_->UpdateKeyFile(settings_.key_file);
  spdlog::info("event=reloaded registry={} functions={}", daemon::Quoted(registry_.dir()),
               registry_.size());
}

void Server::ReloadSettings(const Settings &fresh) {
  const Settings next = LiveSettings(settings_, fresh);
  // Launch rules are checked as at start: a bad combination keeps the old.
  if (Status st = CheckLaunches(next, cores_); !st.ok()) {
    spdlog::error("event=reload_failed settings=launch error={}", daemon::Quoted(st.message()));
    return;
  }
  daemon::ReloadKeys keys = daemon::SplitReloadKeys(ChangedSettings(settings_, fresh), AppliesLive);
  const Settings previous = settings_;
  settings_ = next;
  // The TLS files are read again at every SIGHUP (a renewed certificate
  // keeps its path); a reload that fails keeps the files in use.
  if (Status st = LoadTls(); !st.ok()) {
    spdlog::error("event=reload_failed settings=tls error={}", daemon::Quoted(st.message()));
    settings_.tls_cert = previous.tls_cert;
    settings_.tls_key = previous.tls_key;
    settings_.tls_client_ca = previous.tls_client_ca;
    // They keep their running values: the reload's summary must not say
    // they were applied.
    std::erase_if(keys.applied, [](const std::string &key) { return key.starts_with("tls_"); });
  } else if (tls_) {
    spdlog::info("event=tls_reloaded cert={}", daemon::Quoted(settings_.tls_cert));
  }
  daemon::FinishReload("ninfd", settings_.log_level, keys);
}

void Server::Shutdown(std::function<void()> on_stopped) {
  if (stopping_) {
    spdlog::warn("event=shutdown_now running={}", scheduler_.job_table().size());
    scheduler_.KillAll(KillReason::kShutdown);
    return;
  }
  stopping_ = true;
  on_stopped_ = std::move(on_stopped);
  if (reporter_) reporter_->Stop();  // the metaserver sees the connection close: no more calls
  if (relay_) relay_->Stop();        // the relay unregisters us: no more clients
  spdlog::info("event=shutdown running={} queued={} connections={} grace_seconds={}",
               scheduler_.desk().admission().running(), scheduler_.desk().admission().queued(),
               connections_.size(), settings_.grace_seconds);
  listener_.Close();
  unix_listener_.Close();
  scheduler_.BeginShutdown();
  // Connections that are only reading requests go now; those finishing a
  // reply close on their own once it is delivered (bounded by their linger
  // timer), and parked ones belong to jobs.
  for (daemon::Connection *c : connections_.List())
    if (c->state() == daemon::Connection::State::kReading) c->Close();
  scheduler_.StopIdleHandles();
  if (scheduler_.job_table().size() > 0) StartGracePeriod();
  MaybeStopped();
}

void Server::StartGracePeriod() {
  if (settings_.grace_seconds <= 0) {
    scheduler_.KillAll(KillReason::kShutdown);
    return;
  }
  uv_timer_start(
      &grace_timer_,
      [](uv_timer_t *t) {
        auto *self = static_cast<Server *>(t->data);
        spdlog::warn("event=grace_expired jobs={}", self->scheduler_.job_table().size());
        self->scheduler_.KillAll(KillReason::kShutdown);
      },
      static_cast<uint64_t>(settings_.grace_seconds) * 1000, 0);
}

void Server::StartWatchdog() {
  constexpr uint64_t kWatchPeriodMs = 500;
  uv_timer_start(
      &watch_timer_,
      [](uv_timer_t *t) {
        auto *self = static_cast<Server *>(t->data);
        self->PublishLoad();  // what remains of running calls shrinks with time
        self->kept_.Expire();
        self->scheduler_.RunWatchdog();
      },
      kWatchPeriodMs, kWatchPeriodMs);
}

void Server::MaybeStopped() {
  if (!stopping_ || stopped_ || !Drained(scheduler_) || !connections_.empty()) return;
  stopped_ = true;
  daemon::CloseIfOpen(&grace_timer_, &grace_timer_open_);
  daemon::CloseIfOpen(&watch_timer_, &watch_timer_open_);
  scheduler_.executables().CloseBroker();
  if (metrics_) metrics_->Close();
  spdlog::info("event=stopped completed={} failed={} cancelled={} rejected={}", counters_.completed,
               counters_.failed, counters_.cancelled, counters_.rejected);
  if (on_stopped_) on_stopped_();
}

}  // namespace ninf::server
