// The daemon's core: owns the listener, the connections, the jobs, the
// admission policy and the statistics, and ties their events together.
//
//   listener ──accept──> Connection ──request──> Server
//                                                  │ QUERY/LIST/STATS: reply
//                                                  │ CALL: Job, queued or started
//                          WarmPool ──idle Process──> Job (or a cold spawn)
//   Job ──ARGS_RECEIVED / CALL_DONE / exit──> Server ──FinishJob──> slot freed,
//                                                  stats, next queued call
//
// Every way a job can end (normal exit, executable failure, spawn failure,
// client gone, queue full, shutdown) goes through FinishJob(), the only place
// that frees a slot, counts the call and admits the next one.
//
// Server is wiring: each decision (admission, warm start, what an end means)
// is asked of the policy unit (policy.h), each state change is made by the
// job itself (job.h). Single-threaded: everything runs on the libuv loop
// given to the constructor.
#pragma once

#include <uv.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "daemon/connection.h"
#include "daemon/listener.h"
#include "daemon/metrics_endpoint.h"
#include "server/admission.h"
#include "server/connection_policy.h"
#include "server/data_store.h"
#include "server/job.h"
#include "server/job_ending.h"
#include "server/job_state.h"
#include "server/launch_broker.h"
#include "server/launcher.h"
#include "server/meta_reporter.h"
#include "server/registry.h"
#include "server/reuse_policy.h"
#include "server/settings.h"
#include "server/stats.h"
#include "server/warm_policy.h"
#include "server/warm_pool.h"
#include "server/watch_policy.h"

namespace ninf::server {

// The job a connection was handed to (Connection::data), or null.
inline Job *JobOf(const daemon::Connection &conn) { return static_cast<Job *>(conn.data()); }

class Server : public daemon::Connection::Delegate, public JobEvents {
 public:
  Server(uv_loop_t *loop, const Settings &settings, Registry registry, int cores);
  ~Server() override;
  Server(const Server &) = delete;
  Server &operator=(const Server &) = delete;

  // Listens and, when configured, writes the ready file.
  // Errors: NINF_ERR_SERVER (cannot listen, cannot write the ready file).
  Status Start();

  // SIGTERM/SIGINT: stop accepting, refuse queued calls, let running calls
  // finish within grace_seconds, then kill them. A second call kills at once.
  // `on_stopped` runs once every connection and job is gone and the server's
  // own handles are closed; the loop then has nothing left of the server.
  void Shutdown(std::function<void()> on_stopped);

  // SIGHUP: reloads the registry folder; on error the old registry stays.
  // Idle warm executables are killed either way (their programs may have
  // been replaced); each function is warmed again after its next call.
  void ReloadRegistry();

  // SIGHUP, before the registry: `fresh` is the settings read again from
  // the same command line, environment and config file. The keys that can
  // change live (AppliesLive) take effect; a changed key that cannot is
  // logged as needing a restart and keeps its running value.
  void ReloadSettings(const Settings &fresh);

  int port() const { return listener_.port(); }

 private:
  // Connection::Delegate
  void OnRequest(daemon::Connection &conn, const FrameHeader &h, std::string_view body) override;
  void OnProtocolError(daemon::Connection &conn, const Status &st) override;
  void OnHangup(daemon::Connection &conn) override;
  void OnPeerShutWrite(daemon::Connection &conn) override;
  void OnClosed(daemon::Connection &conn) override;
  void OnOutputFlushed(daemon::Connection &conn) override;
  void OnInputArrived(daemon::Connection &conn) override;

  // JobEvents
  void OnArgsReceived(Job &job, bool resumed) override;
  void OnCallDone(Job &job, const ControlMsg &msg) override;
  void OnWantSlot(Job &job) override;
  void OnClientGone(Job &job) override;
  void OnReleased(Job &job) override;
  void OnExit(Job &job) override;
  void OnKeep(Job &job, const ControlMsg &msg, daemon::UniqueFd data) override;

  void Accept(daemon::UniqueFd fd, const std::string &peer);
  // Makes room for a new connection from `address` under the connection
  // limits, replacing an open one if the policy names one. False: refuse.
  bool MakeRoomFor(const std::string &address);

  // The watchdog (server_watch.cc): twice a second every job is held to its
  // deadlines (policy.h Watch) and the idle handles to their budgets.
  void StartWatchdog();
  void RunWatchdog();
  void WatchIdleHandles(Clock::time_point now);
  // Authentication (server_auth.cc). LoadKeys reads settings_.key_file
  // (nothing to do without one); HandleAuth serves the frames of a
  // connection that has not proved it holds a key yet.
  Status LoadKeys();
  void HandleAuth(daemon::Connection &conn, const FrameHeader &h, std::string_view body);
  bool auth_required() const { return !keys_.keys.empty(); }

  void HandleQuery(daemon::Connection &conn, std::string_view body);
  void HandleList(daemon::Connection &conn);
  void HandleStats(daemon::Connection &conn);
  void HandleCall(daemon::Connection &conn, std::string_view body);

  // Kept data (server_store.cc, docs/transactions.md): the store entry of a
  // two-phase call, COLLECT/RELEASE from clients, FETCH from executables,
  // CTL_KEEP from executables, and the end of a two-phase job.
  Status ReserveResult(uint64_t keep_bytes, CallParams *params);
  void HandleCollect(daemon::Connection &conn, std::string_view body);
  void HandleRelease(daemon::Connection &conn, std::string_view body);
  void HandleFetch(daemon::Connection &conn, std::string_view body);
  // A two-phase job ends: a result never handed over becomes an ERROR
  // frame for its collector (or is dropped if the client was told already).
  void SettleResult(Job &job, const Status &why);
  // The key id a connection proved ("" without authentication): a store
  // entry's owner.
  std::string OwnerOf(daemon::Connection &conn);

  // A new call asks admission for a slot only once its arguments have
  // begun to arrive (libninf sends them right behind the CALL): a client
  // that sends CALL and then nothing holds no slot, only its connection,
  // and is ended after request_timeout_seconds.
  void OfferJob(Job &job);
  void StartJob(Job &job);
  // Hands the job to a warm executable if one takes it; false if none did.
  bool HandoffWarm(Job &job);
  // Starts an executable for the job and hands it over; on failure the job
  // is ended (and deleted) and the result is false.
  bool HandoffCold(Job &job);
  // How `function`'s executable is started (launcher.h).
  Launch LaunchOf(const std::string &function) const;
  // `entry`'s interface as clients see it: with `redirect` set when its
  // executables claim their channel over TCP (launcher.h).
  wire::FunctionInterface ServedInterface(const FunctionEntry &entry) const;
  // Opens the launch broker: on first use, or at start with a
  // launch_address (a port that cannot be had fails the start, not a call).
  Status OpenLaunchBroker();
  // Starts a process of `function` for `owner`: Process::Spawn with its
  // launch, and the launch broker opened on first use.
  Status SpawnProcess(const std::string &function, const std::string &executable,
                      ProcessOwner *owner, Process **out);
  // Whether `process` may serve another call after this one of `job`'s
  // (policy.h MayReuse); `served` counts the calls including this one.
  bool MayReuseAfter(const Job &job, const Process &process, uint64_t served) const;
  void AdmitQueued();
  void FinishJob(Job &job, EndReason reason, const Status &why = Status());

  // The scheduler's clock: seconds since the server started.
  double SchedulerNow() const;
  // What admission needs to know of a call (its predicted run time).
  CallDemand DemandOf(const Job &job) const;
  // The call holds a slot and `threads` now; its wait is counted.
  void AdmitJob(Job &job, int threads);
  // Core-seconds of the routines running now, so far.
  double OpenBusyCoreSeconds() const;

  // The metaserver (server_meta.cc): registration, load snapshots.
  Status StartMetaReporter();
  std::string AdvertisedAddress() const;
  wire::ServerRegistration Registration() const;
  // Hands the current load to the reporter, which sends it when it changed
  // enough. Called wherever a call is admitted, started or ended.
  void PublishLoad();

  std::string StatsText() const;
  // The daemon's instantaneous values, for --status and the metrics.
  Gauges CurrentGauges() const;
  // The Prometheus endpoint (`metrics` setting).
  Status StartMetrics();
  Status WriteReadyFile() const;
  // Starts the Unix-domain listener that settings_.unix_socket asks for.
  // "auto" tries /tmp/ninfd-PORT.sock and only warns when it cannot.
  Status StartUnixListener();
  void KillAll(KillReason reason);
  void MaybeStopped();

  uv_loop_t *loop_;
  Settings settings_;
  Registry registry_;
  int cores_;
  Admission admission_;
  Counters counters_;
  DataStore store_;
  uint64_t store_served_bytes_ = 0;
  auth::KeyRing keys_;  // empty: no authentication
  WarmPool warm_;
  daemon::Listener listener_;
  daemon::Listener unix_listener_;  // the same-host path, when there is one
  std::string unix_path_;           // its socket ("" if none)
  uv_timer_t grace_timer_{};
  bool grace_timer_open_ = false;
  uv_timer_t watch_timer_{};
  bool watch_timer_open_ = false;
  // Owned here; a connection is freed in OnClosed, once libuv has closed
  // its handles, a job in FinishJob.
  std::unordered_map<daemon::Connection *, std::unique_ptr<daemon::Connection>> connections_;
  std::unordered_map<uint64_t, std::unique_ptr<Job>> jobs_;
  // Open connections per client address (max_connections_per_client),
  // kept as they open and close so that an accept does not scan them all.
  std::unordered_map<std::string, std::size_t> connections_per_address_;
  uint64_t next_connection_id_ = 1;
  uint64_t next_job_id_ = 1;
  bool admitting_ = false;
  bool stopping_ = false;
  bool stopped_ = false;
  std::function<void()> on_stopped_;
  std::string server_id_;                             // for the metaserver
  std::unique_ptr<MetaReporter> reporter_;            // null without a metaserver
  std::unique_ptr<daemon::MetricsEndpoint> metrics_;  // `metrics` set: the Prometheus endpoint
  std::unique_ptr<LaunchBroker> broker_;  // launched executables' connect-back; on first use
  std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
};

}  // namespace ninf::server
