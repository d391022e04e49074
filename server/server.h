// The daemon's core: owns the listeners and the connections, reads their
// requests, and ties them to the two services that do the work.
//
//   listener ──accept──> Connection ──request──> Server
//                                                  │ QUERY/LIST/STATS: reply
//                                                  │ CALL: Scheduler::Submit
//                                                  │ COLLECT/RELEASE/FETCH:
//                                                  │   KeptDataService
//   Scheduler (scheduler.h): the jobs, admission and the queue, starting
//     and finishing calls, the warm pool, the watchdog's verdicts.
//   KeptDataService (kept_data_service.h): the DataStore, two-phase results
//     and transaction blocks' arrays.
//
// Server keeps the connections, dispatches requests, renders the stats and
// metrics, reloads and shuts down; the connection events that concern a
// call go to the scheduler. Single-threaded: everything runs on the libuv
// loop given to the constructor.
#pragma once

#include <uv.h>

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>

#include "daemon/connection.h"
#include "daemon/connection_set.h"
#include "daemon/exposure.h"
#include "daemon/frame_table.h"
#include "daemon/listener.h"
#include "daemon/metrics_endpoint.h"
#include "ninf.pb.h"
#include "server/kept_data_service.h"
#include "server/meta_reporter.h"
#include "server/registry.h"
#include "server/relay_link.h"
#include "server/scheduler.h"
#include "server/settings.h"
#include "server/stats.h"
#include "server/user_policy.h"

namespace ninf::server {

// Largest protobuf header of a request ninfd accepts: a name at most.
inline constexpr uint32_t kMaxRequestHeader = 64 * 1024;

// What ninfd's connections accept: its frame table's rules (server_requests.cc).
const daemon::RequestRules &NinfdRequestRules();

class Server : public daemon::Connection::Delegate, private SchedulerObserver {
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

  // `tcp`: from the TCP listener (TLS when tls_cert is set), not the
  // same-host Unix socket.
  void Accept(daemon::UniqueFd fd, const std::string &peer, bool tcp);
  // Builds the TLS context from tls_cert, tls_key and tls_client_ca (none
  // without tls_cert). On error the context in use stays.
  Status LoadTls();
  // What ninfd serves at `listen`, with its key, TLS and waivers
  // (daemon/exposure.h): the checks of the listener, the relay and /metrics.
  daemon::Exposure Exposed() const;

  // The watchdog's timer: twice a second the kept data expires and the
  // scheduler holds its jobs to their deadlines.
  void StartWatchdog();
  // Authentication (server_auth.cc). LoadKeys reads settings_.key_file
  // (nothing to do without one); HandleAuth serves the frames of a
  // connection that has not proved it holds a key yet.
  Status LoadKeys();
  void HandleAuth(daemon::Connection &conn, const FrameHeader &h, std::string_view body);

  // The requests (server_requests.cc): ninfd's frame table, the only list
  // of what a client may send (NinfdRequestRules derives the reader's).
  static std::span<const daemon::FrameRoute<Server>> Requests();
  friend const daemon::RequestRules &NinfdRequestRules();
  void HandleQuery(daemon::Connection &conn, std::string_view body);
  void HandleList(daemon::Connection &conn);
  void HandleStats(daemon::Connection &conn);
  void HandleCall(daemon::Connection &conn, std::string_view body);
  // What a CALL asks for `entry`, with the server's bounds applied.
  CallParams ParamsOf(const wire::CallRequest &req, const FunctionEntry &entry,
                      daemon::Connection &conn) const;
  // `entry`'s interface as clients see it: with `redirect` set when its
  // executables claim their channel over TCP (launcher.h).
  wire::FunctionInterface ServedInterface(const FunctionEntry &entry) const;

  // The relay (server_meta.cc): --reverse keeps a control connection out to
  // it; dialed-back connections come to Accept like accepted ones.
  Status StartRelayLink();
  // The metaserver (server_meta.cc): registration, load snapshots.
  Status StartMetaReporter();
  std::string AdvertisedAddress() const;

  wire::ServerRegistration Registration() const;
  // SchedulerObserver. PublishLoad hands the current load to the reporter,
  // which sends it when it changed enough: wherever a call is admitted,
  // started or ended, and on a timer.
  void PublishLoad() override;

  // `only_user`: FormatStats's (null: every user's lines).
  std::string StatsText(const std::string *only_user = nullptr) const;
  // The daemon's instantaneous values, for --status and the metrics.
  Gauges CurrentGauges() const;
  // The Prometheus endpoint (`metrics` setting).
  Status StartMetrics();
  // Starts the Unix-domain listener that settings_.unix_socket asks for.
  // "auto" tries /tmp/ninfd-PORT.sock and only warns when it cannot.
  Status StartUnixListener();
  // Shutdown's end of the jobs: a grace period for the running calls, then
  // the kill (at once without one).
  void StartGracePeriod();
  void MaybeStopped() override;

  uv_loop_t *loop_;
  Settings settings_;
  Registry registry_;
  int cores_;
  std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
  Counters counters_;
  // Who calls and what they may do (user_policy.h); no keys: no
  // authentication.
  UserPolicy users_;
  KeptDataService kept_;
  // The [users.NAME] tables users_ was built from: a reload whose key
  // files fail keeps these, with the users in force.
  daemon::NamedTables users_in_force_;
  tls::Context tls_;  // null: plaintext TCP
  daemon::Listener listener_;
  daemon::Listener unix_listener_;  // the same-host path, when there is one
  std::string unix_path_;           // its socket ("" if none)
  uv_timer_t grace_timer_{};
  bool grace_timer_open_ = false;
  uv_timer_t watch_timer_{};
  bool watch_timer_open_ = false;
  // Owned here, under max_connections and max_connections_per_client; a
  // connection is freed in OnClosed, once libuv has closed its handles.
  daemon::ConnectionSet connections_;
  // The jobs (after the connections: destroyed before them).
  Scheduler scheduler_;
  uint64_t next_connection_id_ = 1;
  bool stopping_ = false;
  bool stopped_ = false;
  bool ready_ = false;  // Start() has finished (the ready file is written): /healthz
  std::function<void()> on_stopped_;
  std::string server_id_;                             // for the metaserver
  std::unique_ptr<MetaReporter> reporter_;            // null without a metaserver
  std::unique_ptr<RelayLink> relay_;                  // null unless reverse
  std::unique_ptr<daemon::MetricsEndpoint> metrics_;  // `metrics` set: the Prometheus endpoint
};

}  // namespace ninf::server
