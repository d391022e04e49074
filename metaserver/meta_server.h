// The ninf-meta daemon's core: accepts servers' and clients' connections
// (the same framing, Connection and authentication as ninfd), keeps the
// server table, and answers placements with the policy.
//
//   ninfd  --REGISTER / LOAD-->  MetaServer --> ServerTable (leases, load,
//                                    │            reservations, links)
//   client --PLACE------------>      │ Candidates -> Rank (placement.h)
//          <-PLACEMENT---------      │ Reserve on the first
//          --OUTCOME / PROBED->      │ Release, link samples (forecast.h)
//
// Decisions are the pure functions of placement.h and server_table.h; this
// file is wiring. Single-threaded, on the libuv loop given to it.
#pragma once

#include <uv.h>

#include <chrono>
#include <functional>
#include <map>
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
#include "metaserver/meta_settings.h"
#include "metaserver/meta_stats_table.h"
#include "metaserver/meta_users.h"
#include "metaserver/placement.h"
#include "metaserver/placer.h"
#include "metaserver/server_table.h"
#include "ninf.pb.h"
#include "protocol/auth.h"

namespace ninf::meta {

// Which requests ninf-meta takes, and how large (a registration carries its
// functions' interfaces).
const daemon::RequestRules &MetaRequestRules();

class MetaServer : public daemon::Connection::Delegate {
 public:
  MetaServer(uv_loop_t *loop, const MetaSettings &settings);
  ~MetaServer() override;
  MetaServer(const MetaServer &) = delete;
  MetaServer &operator=(const MetaServer &) = delete;

  // Loads the keys, listens, starts the lease timer, writes the ready file.
  // Errors: NINF_ERR_CONFIG (key file), NINF_ERR_SERVER (cannot listen).
  Status Start();
  // Builds the TLS context of the listener from `s`'s tls_cert, tls_key and
  // tls_client_ca (none without tls_cert): at start and on SIGHUP, where a
  // failure keeps the context in use (and is returned).
  Status LoadTls(const MetaSettings &s);
  // SIGHUP, with the settings read again: the [users.NAME] and
  // [limits.NAME] tables of `running` from now on (ReloadKeys reads their
  // key files).
  void TakeUserTables(const MetaSettings &running);
  // SIGHUP: the key file and the users' key files are read again; a broken
  // one keeps the keys and users in use (event=reload_failed).
  void ReloadKeys();
  // What ninf-meta serves at `listen`, with its key, TLS and waivers
  // (daemon/exposure.h): the checks of the listener and /metrics.
  daemon::Exposure Exposed() const;
  // Closes the listener, every connection and the timer; `on_stopped` runs
  // once they are closed.
  void Shutdown(std::function<void()> on_stopped);

  int port() const { return listener_.port(); }

  // Serves an already connected stream socket as if it had been accepted
  // from `peer` ("host:port"): the in-process way into the request path
  // (fuzz/meta_request_fuzz.cc drives it over a socketpair).
  void Serve(daemon::UniqueFd fd, const std::string &peer) { Accept(std::move(fd), peer); }

 private:
  void OnRequest(daemon::Connection &conn, const FrameHeader &h, std::string_view body) override;
  void OnProtocolError(daemon::Connection &conn, const Status &st) override;
  void OnHangup(daemon::Connection &) override {}
  void OnPeerShutWrite(daemon::Connection &) override {}
  void OnClosed(daemon::Connection &conn) override;
  void OnOutputFlushed(daemon::Connection &) override {}
  void OnInputArrived(daemon::Connection &) override {}

  void Accept(daemon::UniqueFd fd, const std::string &peer);
  // ninf-meta's frame table, the only list of what a peer may send
  // (MetaRequestRules derives the reader's).
  static std::span<const daemon::FrameRoute<MetaServer>> Requests();
  friend const daemon::RequestRules &MetaRequestRules();
  // The authentication handshake (daemon/auth_handshake.h) with ninf-meta's keys.
  void ServeHandshake(daemon::Connection &conn, const FrameHeader &h, std::string_view body);
  void HandleRegister(daemon::Connection &conn, std::string_view body);
  // A registration's entry in the table: one server per connection (true:
  // it replaced an entry of the same address).
  bool Enter(daemon::Connection &conn, Registration reg);
  void HandleLoad(daemon::Connection &conn, std::string_view body);
  void HandleQuery(daemon::Connection &conn, std::string_view body);
  void HandleList(daemon::Connection &conn);
  void HandlePlace(daemon::Connection &conn, std::string_view body);
  void HandleOutcome(daemon::Connection &conn, std::string_view body);
  void HandleProbed(daemon::Connection &conn, std::string_view body);
  void HandleStats(daemon::Connection &conn, std::string_view body);
  void Ack(daemon::Connection &conn, bool register_again = false);
  // A server's acknowledgement (REGISTER, LOAD): Ack with the list of
  // servers, unless the server holds `held` = servers_version_ already.
  void AckServer(daemon::Connection &conn, bool register_again, uint64_t held);

  // The lease timer: servers silent past their lease leave the table.
  static void OnLeaseTimer(uv_timer_t *timer);
  // Runs on_stopped_ once shutting down has closed everything.
  void MaybeStopped();
  void ExpireLeases();

  // The link model of (the client's site, the reporter, server address);
  // null when the site name is too long.
  LinkModel *LinkFor(daemon::Connection &conn, const std::string &said, const std::string &address);
  double Now() const;

  uv_loop_t *loop_;
  MetaSettings settings_;
  Policy policy_;
  PolicyState policy_state_;
  ServerTable table_;
  Placer placer_{settings_, policy_, policy_state_, table_};
  // Which connection registered each server: only that connection's close
  // removes it (a server that reconnected has a new one).
  std::unordered_map<std::string, daemon::Connection *> registered_by_;
  // The version of the list of servers the acknowledgements carry: bumped
  // whenever one comes or goes; random at start, so a restarted metaserver
  // does not repeat a version a ninfd holds for another list.
  uint64_t servers_version_ = 1;
  // Its key_file and [users.NAME] keys, and who may do what (meta_users.h).
  MetaUsers users_;
  tls::Context tls_;  // null: plaintext TCP
  daemon::Listener listener_;
  std::unique_ptr<daemon::MetricsEndpoint> metrics_;  // `metrics` set
  uv_timer_t lease_timer_{};
  bool lease_timer_open_ = false;
  bool lease_timer_closed_ = false;
  // Under max_connections and max_connections_per_client.
  daemon::ConnectionSet connections_;
  uint64_t next_connection_id_ = 1;
  bool ready_ = false;  // Start() has finished: /healthz says "ready"
  bool stopping_ = false;
  std::function<void()> on_stopped_;
  std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();

  MetaCounters counters_;
  // The instantaneous values of the statistics (meta_stats_table.h).
  MetaGauges CurrentGauges() const;
};

}  // namespace ninf::meta
