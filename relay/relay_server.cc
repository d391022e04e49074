#include "relay/relay_server.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "daemon/auth_handshake.h"
#include "daemon/exposure.h"
#include "daemon/listener_tls.h"
#include "daemon/log.h"
#include "daemon/loop_handles.h"
#include "ninf.pb.h"
#include "protocol/address.h"

namespace ninf::relay {
namespace {

using daemon::Quoted;

// Largest protobuf header the relay reads: a key id, a nonce, a name.
constexpr uint32_t kMaxHeader = 1024;
constexpr uint64_t kSweepMs = 250;

// A ninfd registering without a key: it is the "client" here, and the fix
// is in ninfd's settings, so the client's wording (NINF_KEY_FILE) would
// send its administrator to the wrong file.
constexpr const char *kRelayNeedsServerKey =
    "this relay requires authentication: ninfd proves itself with the first key of its own "
    "key_file, so set key_file in ninfd's settings to a file whose first key is one of the "
    "relay's";

// A second owner of a connection's socket, for the bridge: the Connection
// closes its own descriptor when it is freed.
Status DupSocket(int fd, daemon::UniqueFd *out) {
  int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0)
    return Status(NINF_ERR_SERVER,
                  std::string("cannot duplicate a socket: ") + std::strerror(errno));
  out->reset(copy);
  return Status::Ok();
}

RegistrationLimits LimitsOf(const RelaySettings &s) {
  return RegistrationLimits{
      .max_servers = static_cast<std::size_t>(s.max_servers),
      .max_pending_dials = static_cast<std::size_t>(s.max_pending_dials),
      .max_bridges_per_server = static_cast<std::size_t>(s.max_bridges_per_server),
      .dial_timeout_ms = static_cast<uint64_t>(s.dial_timeout_seconds) * 1000,
      // Two keep-alives missed (one every third of idle_timeout).
      .live_ms = static_cast<uint64_t>(s.idle_timeout_seconds) * 2000 / 3};
}

daemon::Connection *ConnOf(Peer peer) { return static_cast<daemon::Connection *>(peer); }

}  // namespace

RelayServer::RelayServer(uv_loop_t *loop, const RelaySettings &settings)
    : loop_(loop),
      settings_(settings),
      listener_(loop, [this](daemon::UniqueFd fd,
                             const std::string &peer) { Accept(std::move(fd), peer); }),
      connections_(loop),
      book_(LimitsOf(settings)) {
  (void)uv_timer_init(loop_, &sweep_);  // only fills the handle in
  sweep_.data = this;
  sweep_open_ = true;
}

RelayServer::~RelayServer() = default;

std::span<const daemon::FrameRoute<RelayServer>> RelayServer::Requests() {
  using daemon::FrameAccess;
  using Route = daemon::FrameRoute<RelayServer>;
  using daemon::Connection;
  static const Route kRoutes[] = {
      {FRAME_AUTH, FrameAccess::kHandshake, kMaxHeader, 0,
       [](RelayServer &r, Connection &c, const FrameHeader &h, std::string_view b) {
         r.HandleAuth(c, h, b);
       }},
      {FRAME_PROOF, FrameAccess::kHandshake, kMaxHeader, 0,
       [](RelayServer &r, Connection &c, const FrameHeader &h, std::string_view b) {
         r.HandleAuth(c, h, b);
       }},
      {FRAME_RELAY_REGISTER, FrameAccess::kAuthenticated, kMaxHeader, 0,
       [](RelayServer &r, Connection &c, const FrameHeader &, std::string_view b) {
         r.HandleRegister(c, b);
       },
       kRelayNeedsServerKey},
      // A client is authenticated by ninfd itself, through the bridge.
      {FRAME_RELAY_OPEN, FrameAccess::kAnyone, kMaxHeader, 0,
       [](RelayServer &r, Connection &c, const FrameHeader &, std::string_view b) {
         r.HandleOpen(c, b);
       }},
      // The one-time token, presented with the key that registered the
      // server: the token alone travels in the control link's frames.
      {FRAME_RELAY_DATA, FrameAccess::kAuthenticated, kMaxHeader, 0,
       [](RelayServer &r, Connection &c, const FrameHeader &, std::string_view b) {
         r.HandleData(c, b);
       },
       kRelayNeedsServerKey},
  };
  return kRoutes;
}

const daemon::RequestRules &RelayServer::Rules() {
  // Clients and dial-backs speak plaintext on a TLS listener too: their
  // bytes after the first frame are ninfd's TLS (relay_server.h).
  static const daemon::RequestRules rules =
      daemon::RulesOf("ninf-relay", Requests(), /*plaintext_beside_tls=*/true);
  return rules;
}

Status RelayServer::Start() {
  if (!settings_.key_file.empty())
    NINF_RETURN_IF_ERROR(auth::LoadKeyFile(settings_.key_file, &keys_));
  NINF_RETURN_IF_ERROR(LoadTls(settings_));
  // TLS is not required beyond loopback: the relay reads only the first
  // frame of a client (its server's name) and moves the rest, TLS end to end
  // between client and ninfd, and a dial-back counts only with the key that
  // registered its server (docs/relay.md). tls_cert covers the control
  // connections.
  NINF_RETURN_IF_ERROR(daemon::CheckExposure(
      {.listen = settings_.listen, .key = auth_required(), .insecure = settings_.insecure}));
  NINF_RETURN_IF_ERROR(listener_.Start(settings_.listen, static_cast<int>(settings_.port)));
  uv_timer_start(
      &sweep_, [](uv_timer_t *t) { static_cast<RelayServer *>(t->data)->ExpireDials(); }, kSweepMs,
      kSweepMs);
  spdlog::info(
      "event=listening address={} port={} authentication={} tls={} max_servers={} "
      "max_pending_dials={} max_bridges_per_server={} pid={}",
      listener_.address(), listener_.port(), auth_required() ? "on" : "off", tls_ ? "on" : "off",
      settings_.max_servers, settings_.max_pending_dials, settings_.max_bridges_per_server,
      ::getpid());
  return daemon::WritePortFile(settings_.ready_file, listener_.port());
}

void RelayServer::ReloadKeys() { daemon::ReloadKeyFile(settings_.key_file, &keys_); }

Status RelayServer::LoadTls(const RelaySettings &s) {
  NINF_RETURN_IF_ERROR(
      daemon::LoadListenerTls({.cert = s.tls_cert, .key = s.tls_key, .client_ca = ""}, &tls_));
  if (tls_) spdlog::info("event=tls state=on cert={}", Quoted(s.tls_cert));
  return Status::Ok();
}

void RelayServer::Accept(daemon::UniqueFd fd, const std::string &peer) {
  if (stopping_) return;  // fd closes here
  const daemon::ConnectionSet::Limits limits{
      .total = static_cast<std::size_t>(settings_.max_connections),
      .per_address = static_cast<std::size_t>(settings_.max_connections_per_client)};
  // Clients never prove a key here: every connection counts alike.
  if (Status room = connections_.MakeRoom(peer, limits, false); !room.ok()) {
    // In plaintext: most peers here are clients and dial-backs, which speak
    // plaintext to the relay even when it has TLS.
    daemon::RefuseConnection(std::move(fd), peer, room, false);
    return;
  }
  // A first frame must come as quickly as a whole request: a peer that
  // sends nothing holds a slot no longer than that.
  daemon::Connection::Timeouts timeouts;
  timeouts.request_ms = static_cast<uint64_t>(settings_.request_timeout_seconds) * 1000;
  timeouts.idle_ms = timeouts.request_ms;
  std::unique_ptr<daemon::Connection> conn = daemon::Connection::Open(
      loop_, std::move(fd), next_connection_id_++, peer, this, timeouts, Rules(), tls_);
  if (!conn) return;
  spdlog::debug("event=connect conn={} peer={}", conn->id(), peer);
  connections_.Add(std::move(conn));
}

void RelayServer::OnRequest(daemon::Connection &conn, const FrameHeader &h, std::string_view body) {
  daemon::Dispatch(*this, Requests(), auth_required(), conn, h, body);
}

void RelayServer::OnProtocolError(daemon::Connection &conn, const Status &st) {
  daemon::RateLimitedWarn("protocol_error", "event=protocol_error conn={} peer={} error={}",
                          conn.id(), conn.peer(), Quoted(st.message()));
}

void RelayServer::HandleAuth(daemon::Connection &conn, const FrameHeader &h,
                             std::string_view body) {
  daemon::ServeAuthFrame(conn, keys_, h, body,
                         static_cast<uint64_t>(settings_.idle_timeout_seconds) * 1000,
                         &auth_failures_);
}

void RelayServer::Refuse(daemon::Connection &conn, const Status &why, const char *event) {
  daemon::RateLimitedWarn(event, "event={} conn={} peer={} error={}", event, conn.id(), conn.peer(),
                          Quoted(why.message()));
  conn.Fail(why);
}

void RelayServer::HandleRegister(daemon::Connection &conn, std::string_view body) {
  wire::RelayRegister req;
  if (!req.ParseFromArray(body.data(), static_cast<int>(body.size())) || !IsRelayName(req.name())) {
    Refuse(conn,
           Status(NINF_ERR_INVALID_ARGUMENT,
                  "RELAY_REGISTER needs a server name of 1 to 64 of A-Z a-z 0-9 . _ -"),
           "register_refused");
    return;
  }
  if (Status st = RegisterTransport(conn); !st.ok()) {
    Refuse(conn, st, "register_refused");
    return;
  }
  const std::string &name = req.name();
  Registered done;
  const Registrant who{name, conn.auth().key_id, req.instance()};
  if (Status st = book_.Register(who, &conn, uv_now(loop_), &done); !st.ok()) {
    if (Peer holder = book_.control(name); holder && holder != &conn)
      daemon::RateLimitedWarn("register_conflict",
                              "event=register_conflict name={} peer={} holder_peer={} key={}", name,
                              conn.peer(), ConnOf(holder)->peer(), KeyIdText(who.identity));
    Refuse(conn, st, "register_refused");
    return;
  }
  if (done.replaced) {
    daemon::Connection *old = ConnOf(done.replaced);
    spdlog::info("event=server_replaced name={} old_peer={} peer={}", name, old->peer(),
                 conn.peer());
    old->Fail(Status(NINF_ERR_SERVER, "replaced by a newer registration of '" + name + "'"));
  }
  const uint64_t idle_ms = static_cast<uint64_t>(settings_.idle_timeout_seconds) * 1000;
  conn.SetIdleTimeout(idle_ms);
  wire::RelayAck ack;
  ack.set_keepalive_ms(static_cast<uint32_t>(idle_ms / 3));
  conn.Reply(FRAME_RELAY_ACK, &ack);
  if (done.fresh)
    spdlog::info("event=server_registered name={} conn={} peer={} servers={}", name, conn.id(),
                 conn.peer(), book_.servers());
}

Status RelayServer::RegisterTransport(const daemon::Connection &conn) const {
  if (!tls_ || conn.transport().active()) return Status::Ok();
  return Status(NINF_ERR_AUTH,
                "this relay requires TLS of its servers (it has tls_cert): set tls_ca in "
                "ninfd's settings to the CA that signed the relay's certificate");
}

void RelayServer::HandleOpen(daemon::Connection &conn, std::string_view body) {
  if (conn.transport().active()) {  // the bridge moves raw bytes: no session of ours in them
    Refuse(conn,
           Status(NINF_ERR_PROTOCOL,
                  "RELAY_OPEN comes in plaintext: a client's TLS runs end to end with its "
                  "server, through the relay"),
           "open_refused");
    return;
  }
  wire::RelayOpen req;
  if (!req.ParseFromArray(body.data(), static_cast<int>(body.size())) || !IsRelayName(req.name())) {
    Refuse(conn,
           Status(NINF_ERR_INVALID_ARGUMENT,
                  "RELAY_OPEN needs a server name of 1 to 64 of A-Z a-z 0-9 . _ -"),
           "open_refused");
    return;
  }
  if (Status st = book_.Admit(req.name()); !st.ok()) {
    Refuse(conn, st, "open_refused");
    return;
  }
  auth::Nonce nonce;
  if (Status st = auth::MakeNonce(&nonce); !st.ok()) {
    Refuse(conn, st, "open_refused");
    return;
  }
  std::string token(reinterpret_cast<const char *>(nonce.data()), nonce.size());
  daemon::Connection *control = ConnOf(book_.Wait(token, req.name(), &conn, uv_now(loop_)));
  conn.WatchHangup(true);  // a client that gives up frees its place at once
  wire::RelayDial dial;
  dial.set_token(token);
  control->Reply(FRAME_RELAY_DIAL, &dial);
  spdlog::debug("event=dial_asked server={} conn={} peer={}", req.name(), conn.id(), conn.peer());
}

void RelayServer::HandleData(daemon::Connection &conn, std::string_view body) {
  if (conn.transport().active()) {  // as RELAY_OPEN: the bridge moves raw bytes
    Refuse(conn,
           Status(NINF_ERR_PROTOCOL,
                  "RELAY_DATA comes in plaintext: the bytes after it are the client's TLS "
                  "with ninfd"),
           "dial_refused");
    return;
  }
  wire::RelayData req;
  std::optional<PendingDial> pending;
  if (req.ParseFromArray(body.data(), static_cast<int>(body.size())))
    pending = book_.TakeDial(req.token(), conn.auth().key_id);
  if (!pending) {
    ++auth_failures_;
    Refuse(conn,
           Status(NINF_ERR_AUTH,
                  "unknown or expired dial token, or one the server's key did not present (a "
                  "dial-back is accepted once, within dial_timeout_seconds of the relay asking "
                  "for it, from the key that registered the server)"),
           "dial_refused");
    return;
  }
  StartBridge(*pending, conn);
}

void RelayServer::StartBridge(const PendingDial &pending, daemon::Connection &data) {
  daemon::Connection &client = *ConnOf(pending.client);
  daemon::UniqueFd client_fd, server_fd;
  Status st = DupSocket(client.fd(), &client_fd);
  if (st.ok()) st = DupSocket(data.fd(), &server_fd);
  if (!st.ok()) {
    spdlog::error("event=bridge_failed server={} error={}", pending.server, Quoted(st.message()));
    client.Fail(st);
    data.Fail(st);
    return;
  }
  const std::string client_peer = client.peer(), server_peer = data.peer();
  // The connections let go of their sockets; the bridge owns the copies.
  client.Close();
  data.Close();
  std::unique_ptr<Bridge> bridge;
  st = Bridge::Open(
      loop_, std::move(client_fd), std::move(server_fd),
      [this](Bridge &b, const std::string &why) { OnBridgeClosed(b, why); }, &bridge);
  if (!st.ok()) {
    spdlog::error("event=bridge_failed server={} error={}", pending.server, Quoted(st.message()));
    return;
  }
  // Even a bridge that finished while opening reports it from a close
  // callback, which the loop runs later: the entry below exists by then.
  Bridge *raw = bridge.get();
  book_.BridgeOpened(pending.server);
  spdlog::info("event=bridged server={} client={} server_peer={} bridges={}", pending.server,
               client_peer, server_peer, bridges_.size() + 1);
  bridges_[raw] = BridgeEntry{std::move(bridge), pending.server};
}

void RelayServer::OnBridgeClosed(Bridge &bridge, const std::string &why) {
  auto it = bridges_.find(&bridge);
  if (it == bridges_.end()) return;
  spdlog::info("event=bridge_closed server={} to_server={} to_client={} error={}",
               it->second.server, bridge.bytes_to_server(), bridge.bytes_to_client(),
               Quoted(why.empty() ? "-" : why));
  book_.BridgeClosed(it->second.server);
  bridges_.erase(it);  // frees the bridge: its close callback has returned its last use
  MaybeStopped();
}

void RelayServer::ExpireDials() {
  for (const PendingDial &p : book_.Expire(uv_now(loop_)))
    Refuse(*ConnOf(p.client),
           Status(NINF_ERR_TIMEOUT, "server '" + p.server + "' did not dial back within " +
                                        std::to_string(settings_.dial_timeout_seconds) +
                                        " s (dial_timeout_seconds): can it reach the relay?"),
           "dial_timeout");
}

void RelayServer::OnClosed(daemon::Connection &conn) {
  Departure gone = book_.Closed(&conn);
  if (!gone.name.empty()) {
    spdlog::info("event=server_unregistered name={} reason={}", gone.name,
                 "control connection closed");
    for (Peer c : gone.orphans)
      ConnOf(c)->Fail(Status(NINF_ERR_CONNECT,
                             "server '" + gone.name + "' left the relay before dialing back"));
  }
  spdlog::debug("event=disconnect conn={} peer={}", conn.id(), conn.peer());
  connections_.Remove(conn);  // frees conn
  MaybeStopped();
}

void RelayServer::Shutdown(std::function<void()> stopped) {
  if (stopping_) return;
  stopping_ = true;
  on_stopped_ = std::move(stopped);
  spdlog::info("event=shutdown servers={} bridges={} connections={}", book_.servers(),
               bridges_.size(), connections_.size());
  listener_.Close();
  for (daemon::Connection *c : connections_.List()) c->Close();
  std::vector<Bridge *> open;
  for (auto &[raw, entry] : bridges_) open.push_back(entry.bridge.get());
  for (Bridge *b : open) b->Close("relay shutting down");
  MaybeStopped();
}

void RelayServer::MaybeStopped() {
  if (!stopping_ || stopped_ || !connections_.empty() || !bridges_.empty()) return;
  stopped_ = true;
  daemon::CloseIfOpen(&sweep_, &sweep_open_);
  spdlog::info("event=stopped");
  if (on_stopped_) on_stopped_();
}

}  // namespace ninf::relay
