// ninf-relay's core: the listener, the connections, the registered reverse
// servers, the clients waiting for a dial-back, and the bridges.
//
//   reverse ninfd --control--> AUTH, PROOF, RELAY_REGISTER{name, instance} -> RELAY_ACK
//                               (again every third of idle_timeout: keep-alive)
//   client ------------------> RELAY_OPEN{name}   (parked: what follows is ninfd's)
//   relay  --control---------> RELAY_DIAL{token}  (one use, dial_timeout_seconds)
//   ninfd  --new connection--> AUTH, PROOF, RELAY_DATA{token}  (parked)
//
// A name is one server's: held by the key that registered it and by one
// ninfd instance while that one is live (registrations.h), and a dial-back
// counts only with the registering key, so a token seen on the wire joins
// nothing.
//   relay: client socket <== splice ==> data socket   (Bridge, bridge.h)
//
// The relay proves nothing to clients and checks no client key: ninfd
// authenticates its clients end to end through the bridge, exactly as if
// they had connected to it directly. With tls_cert, a control connection
// is TLS 1.3 (names, dial tokens and keep-alives are not readable on the
// wire, nor can they be changed); clients and dial-backs stay plaintext on
// the same port (RequestRules::plaintext_beside_tls): what they carry after
// their first frame is ninfd's own TLS, which the bridge moves untouched. Every store is bounded:
// connections (max_connections, per address), servers (max_servers), per server the waiting clients
// (max_pending_dials) and the bridges (max_bridges_per_server). Single-threaded, on the daemon's
// loop.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>

#include "daemon/connection.h"
#include "daemon/connection_set.h"
#include "daemon/frame_table.h"
#include "daemon/listener.h"
#include "protocol/auth.h"
#include "relay/bridge.h"
#include "relay/registrations.h"
#include "relay/relay_settings.h"

namespace ninf::relay {

class RelayServer : public daemon::Connection::Delegate {
 public:
  RelayServer(uv_loop_t *loop, const RelaySettings &settings);
  ~RelayServer() override;
  RelayServer(const RelayServer &) = delete;
  RelayServer &operator=(const RelayServer &) = delete;

  // Loads the keys, checks the exposure, listens, writes the ready file.
  // Errors: NINF_ERR_CONFIG / NINF_ERR_SERVER naming the cause.
  Status Start();
  // Stops accepting, closes every connection and bridge; `stopped` runs
  // once all handles are released.
  void Shutdown(std::function<void()> stopped);
  // SIGHUP: the key file is read again (a broken one keeps the keys).
  void ReloadKeys();
  // Builds the listener's TLS context from s.tls_cert and s.tls_key (none
  // without them), at start and on SIGHUP: connections already open keep
  // theirs. Errors: NINF_ERR_CONFIG naming the file; the context in use
  // stays.
  Status LoadTls(const RelaySettings &s);

 private:
  struct BridgeEntry {
    std::unique_ptr<Bridge> bridge;
    std::string server;
  };

  // Connection::Delegate
  void OnRequest(daemon::Connection &conn, const FrameHeader &h, std::string_view body) override;
  void OnProtocolError(daemon::Connection &conn, const Status &st) override;
  void OnHangup(daemon::Connection &conn) override { conn.Close(); }
  void OnPeerShutWrite(daemon::Connection &) override {}
  void OnClosed(daemon::Connection &conn) override;
  void OnOutputFlushed(daemon::Connection &) override {}
  void OnInputArrived(daemon::Connection &) override {}

  static std::span<const daemon::FrameRoute<RelayServer>> Requests();
  static const daemon::RequestRules &Rules();
  void Accept(daemon::UniqueFd fd, const std::string &peer);
  void HandleAuth(daemon::Connection &conn, const FrameHeader &h, std::string_view body);
  void HandleRegister(daemon::Connection &conn, std::string_view body);
  void HandleOpen(daemon::Connection &conn, std::string_view body);
  void HandleData(daemon::Connection &conn, std::string_view body);
  // A client's failure before it is bridged: FRAME_ERROR and close.
  void Refuse(daemon::Connection &conn, const Status &why, const char *event);
  void ExpireDials();
  void StartBridge(const PendingDial &pending, daemon::Connection &data);
  void OnBridgeClosed(Bridge &bridge, const std::string &why);
  void MaybeStopped();
  bool auth_required() const { return !keys_.keys.empty(); }
  // Why `conn` may not register here: a relay with TLS takes registrations
  // over TLS only. Ok when it may.
  Status RegisterTransport(const daemon::Connection &conn) const;

  uv_loop_t *loop_;
  RelaySettings settings_;
  auth::KeyRing keys_;
  tls::Context tls_;  // null: no TLS
  daemon::Listener listener_;
  daemon::ConnectionSet connections_;
  uv_timer_t sweep_{};  // expires dial-backs that never came
  bool sweep_open_ = false;
  // Names, waiting clients and bridge counts, with every decision on them
  // (registrations.h); its peers are this server's daemon::Connection.
  Registrations book_;
  std::unordered_map<const Bridge *, BridgeEntry> bridges_;
  uint64_t next_connection_id_ = 1;
  uint64_t auth_failures_ = 0;
  bool stopping_ = false;
  bool stopped_ = false;
  std::function<void()> on_stopped_;
};

}  // namespace ninf::relay
