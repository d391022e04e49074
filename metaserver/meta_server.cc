#include "metaserver/meta_server.h"

#include <spdlog/spdlog.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <set>

#include "daemon/auth_handshake.h"
#include "daemon/exposure.h"
#include "daemon/listener_tls.h"
#include "daemon/log.h"
#include "daemon/loop_handles.h"
#include "metaserver/meta_report.h"
#include "protocol/address.h"
#include "protocol/layout.h"

#ifndef NINF_VERSION
#define NINF_VERSION "unknown"
#endif

namespace ninf::meta {
namespace {

using daemon::Connection;
using daemon::Quoted;

// Client-named sites: names up to this long. Links: up to this many in
// all and per reporting client, the least recently used evicted beyond
// (ServerTable::LinkTo), so the table is never full for a new client.
constexpr std::size_t kMaxSiteName = 128;
constexpr std::size_t kMaxLinks = 100000;
constexpr std::size_t kMaxLinksPerReporter = 1024;
// A ninfd registering (or reporting) without a key: it is the "client"
// here, and the fix is in ninfd's settings, so the client's wording
// (NINF_KEY_FILE) would send its administrator to the wrong file.
constexpr const char *kMetaNeedsServerKey =
    "this metaserver requires authentication: ninfd proves itself with the first key of its "
    "own key_file, so set key_file in ninfd's settings to a file whose first key is one of the "
    "metaserver's";
// A registration carries every interface of its server: a standard library
// is ~10 KiB, so this leaves room for registries of thousands of functions.
constexpr uint32_t kMaxMetaRequestHeader = 4u << 20;

void ReplyError(Connection &conn, const Status &st) {
  wire::Error err;
  EncodeError(st, &err);
  conn.Reply(FRAME_ERROR, &err);
}

// A peer that may not do what it asked (meta_users.h): told, logged, closed.
void Refuse(Connection &conn, const Status &st) {
  daemon::RateLimitedWarn("request_denied", "event=request_denied conn={} peer={} error={}",
                          conn.id(), conn.peer(), daemon::Quoted(st.message()));
  conn.Fail(st);
}

template <class M>
bool Parse(Connection &conn, std::string_view body, M *msg, const char *what) {
  if (msg->ParseFromArray(body.data(), static_cast<int>(body.size()))) return true;
  conn.Fail(Status(NINF_ERR_PROTOCOL, std::string("malformed ") + what + " message"));
  return false;
}

// A client's site: what it says, else its address without the port.
std::string SiteOf(const Connection &conn, const std::string &said) {
  if (!said.empty()) return said;
  const std::string &peer = conn.peer();
  std::size_t colon = peer.rfind(':');
  return colon == std::string::npos ? peer : peer.substr(0, colon);
}

// Who reports on this connection: its address without the port, and the
// id of the key it proved ("KEY@HOST") when it authenticated. Link
// samples and tickets belong to a reporter, not to a claimed site.
std::string Reporter(Connection &conn) {
  const std::string &peer = conn.peer();
  std::size_t colon = peer.rfind(':');
  std::string host = colon == std::string::npos ? peer : peer.substr(0, colon);
  if (!conn.auth().authenticated) return host;
  return conn.auth().key_id + "@" + host;
}

// A registration's figures as the table keeps them: the server's lease,
// but never shorter than two of its report periods.
Registration RegistrationOf(const wire::ServerRegistration &msg, const MetaSettings &settings) {
  Registration reg;
  reg.id = msg.server_id();
  reg.address = msg.address();
  reg.site = msg.site();
  reg.cores = std::max<uint32_t>(1, msg.cores());
  reg.slots = std::max<uint32_t>(1, msg.slots());  // 0: not said
  reg.flops_per_second = msg.flops_per_second();
  reg.startup_seconds = msg.startup_seconds();
  uint64_t lease = msg.lease_ms() ? msg.lease_ms() : static_cast<uint64_t>(settings.lease_ms);
  lease = std::max<uint64_t>(lease, 2 * static_cast<uint64_t>(settings.report_ms));
  reg.lease_seconds = static_cast<double>(lease) / 1000.0;
  return reg;
}

}  // namespace

const daemon::RequestRules &MetaRequestRules() {
  static const daemon::RequestRules rules = daemon::RulesOf("ninf-meta", MetaServer::Requests());
  return rules;
}
MetaServer::MetaServer(uv_loop_t *loop, const MetaSettings &settings)
    : loop_(loop),
      settings_(settings),
      policy_(ParsePolicy(settings.policy).value_or(Policy::kCompletion)),
      listener_(loop, [this](daemon::UniqueFd fd,
                             const std::string &peer) { Accept(std::move(fd), peer); }),
      connections_(loop) {
  std::random_device random;
  servers_version_ = (uint64_t{random()} << 32 | random()) | 1;  // 0 is "none" to ninfd
  table_.set_reservation_seconds(static_cast<double>(settings.reservation_seconds));
  table_.set_link_caps(kMaxLinks, kMaxLinksPerReporter);
  (void)uv_timer_init(loop_, &lease_timer_);
  lease_timer_.data = this;
  lease_timer_open_ = true;
}

MetaServer::~MetaServer() = default;

double MetaServer::Now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at_).count();
}

Status MetaServer::Start() {
  NINF_RETURN_IF_ERROR(users_.Load(settings_.key_file, settings_.Users()));
  NINF_RETURN_IF_ERROR(LoadTls(settings_));
  NINF_RETURN_IF_ERROR(daemon::CheckExposure(Exposed()));
  NINF_RETURN_IF_ERROR(listener_.Start(settings_.listen, static_cast<int>(settings_.port)));
  // Leases are checked four times per lease: a silent server leaves within
  // 1.25 leases.
  const uint64_t period = std::max<uint64_t>(50, static_cast<uint64_t>(settings_.lease_ms) / 4);
  uv_timer_start(&lease_timer_, OnLeaseTimer, period, period);
  spdlog::info(
      "event=listening address={} port={} policy={} report_ms={} lease_ms={} retries={} "
      "authentication={} pid={} version={}",
      listener_.address(), listener_.port(), PolicyName(policy_), settings_.report_ms,
      settings_.lease_ms, settings_.retries, users_.keyed() ? "on" : "off", ::getpid(),
      NINF_VERSION);
  if (!settings_.metrics.empty()) {
    // /healthz: "starting" until Start() is through; at SIGTERM the
    // endpoint closes with the listener (ninf-meta keeps no calls to drain).
    metrics_ = std::make_unique<daemon::MetricsEndpoint>(
        loop_, "ninf-meta", [this] { return MetricsText(CurrentGauges(), counters_, table_); },
        [this] {
          return stopping_ ? daemon::Health::kDraining
                 : ready_  ? daemon::Health::kReady
                           : daemon::Health::kStarting;
        });
    NINF_RETURN_IF_ERROR(metrics_->StartFromSetting(settings_.metrics, Exposed(),
                                                    {settings_.tls_cert, settings_.tls_key}));
  }
  NINF_RETURN_IF_ERROR(daemon::WritePortFile(settings_.ready_file, listener_.port()));
  ready_ = true;
  return Status::Ok();
}

void MetaServer::Shutdown(std::function<void()> on_stopped) {
  if (stopping_) return;
  stopping_ = true;
  on_stopped_ = std::move(on_stopped);
  listener_.Close();
  if (metrics_) metrics_->Close();
  for (Connection *conn : connections_.List()) conn->Close();
  daemon::CloseIfOpen(&lease_timer_, &lease_timer_open_, [](uv_handle_t *h) {
    auto *self = static_cast<MetaServer *>(h->data);
    self->lease_timer_closed_ = true;
    self->MaybeStopped();
  });
}

void MetaServer::MaybeStopped() {
  if (!stopping_ || !connections_.empty() || !lease_timer_closed_ || !on_stopped_) return;
  auto done = std::move(on_stopped_);
  on_stopped_ = nullptr;
  done();
}

Status MetaServer::LoadTls(const MetaSettings &s) {
  NINF_RETURN_IF_ERROR(daemon::LoadListenerTls(
      {.cert = s.tls_cert, .key = s.tls_key, .client_ca = s.tls_client_ca}, &tls_));
  if (s.tls_cert.empty()) return Status::Ok();
  spdlog::info("event=tls state=on cert={}", daemon::Quoted(s.tls_cert));
  return Status::Ok();
}

void MetaServer::TakeUserTables(const MetaSettings &running) {
  settings_.users = running.users;
  settings_.function_limits = running.function_limits;
}

void MetaServer::ReloadKeys() {
  if (Status st = users_.Load(settings_.key_file, settings_.Users()); !st.ok()) {
    spdlog::error("event=reload_failed key_file={} error={}", daemon::Quoted(settings_.key_file),
                  daemon::Quoted(st.message()));
    return;
  }
  if (!settings_.key_file.empty())
    spdlog::info("event=reloaded key_file={} keys={}", daemon::Quoted(settings_.key_file),
                 users_.principals().user_of_key.size());
  if (!settings_.users.empty())
    spdlog::info("event=users_reloaded users={}", settings_.users.size());
}

daemon::Exposure MetaServer::Exposed() const {
  return {.listen = settings_.listen,
          .key = users_.keyed(),
          .tls = !settings_.tls_cert.empty(),
          .insecure = settings_.insecure,
          .plaintext = settings_.allow_plaintext};
}

void MetaServer::Accept(daemon::UniqueFd fd, const std::string &peer) {
  if (stopping_) return;
  // The same limits and replacement as ninfd's (daemon/connection_set.h):
  // idle sockets cannot hold the room servers and clients need.
  const daemon::ConnectionSet::Limits limits{
      .total = static_cast<std::size_t>(settings_.max_connections),
      .per_address = static_cast<std::size_t>(settings_.max_connections_per_client)};
  if (Status room = connections_.MakeRoom(peer, limits, users_.keyed()); !room.ok()) {
    daemon::RefuseConnection(std::move(fd), peer, room, tls_ != nullptr);
    return;
  }
  Connection::Timeouts timeouts;
  timeouts.idle_ms = static_cast<uint64_t>(settings_.idle_timeout_seconds) * 1000;
  timeouts.request_ms = static_cast<uint64_t>(settings_.request_timeout_seconds) * 1000;
  if (users_.keyed()) timeouts.idle_ms = std::min(timeouts.idle_ms, timeouts.request_ms);
  std::unique_ptr<Connection> conn = Connection::Open(
      loop_, std::move(fd), next_connection_id_++, peer, this, timeouts, MetaRequestRules(), tls_);
  if (!conn) return;
  connections_.Add(std::move(conn));
  ++counters_.connections_accepted;
}

void MetaServer::OnProtocolError(Connection &conn, const Status &st) {
  ++counters_.protocol_errors;
  daemon::RateLimitedWarn("protocol_error", "event=protocol_error conn={} peer={} code={} error={}",
                          conn.id(), conn.peer(), st.code(), Quoted(st.message()));
}

void MetaServer::OnClosed(Connection &conn) {
  // A server whose registering connection closed is gone (killed, or shut
  // down): it leaves placement now rather than at the end of its lease.
  for (auto it = registered_by_.begin(); it != registered_by_.end();) {
    if (it->second != &conn) {
      ++it;
      continue;
    }
    if (table_.Drop(it->first)) {
      ++servers_version_;
      ++counters_.servers_closed;
      spdlog::info("event=server_left server={} reason=closed servers={}", it->first,
                   table_.size());
    }
    it = registered_by_.erase(it);
  }
  connections_.Remove(conn);  // frees conn
  MaybeStopped();
}

std::span<const daemon::FrameRoute<MetaServer>> MetaServer::Requests() {
  using daemon::FrameAccess;
  using Route = daemon::FrameRoute<MetaServer>;
  constexpr uint32_t kHeader = kMaxMetaRequestHeader;
  static const Route kRoutes[] = {
      {FRAME_AUTH, FrameAccess::kHandshake, kHeader, 0,
       [](MetaServer &m, Connection &c, const FrameHeader &h, std::string_view b) {
         m.ServeHandshake(c, h, b);
       }},
      {FRAME_PROOF, FrameAccess::kHandshake, kHeader, 0,
       [](MetaServer &m, Connection &c, const FrameHeader &h, std::string_view b) {
         m.ServeHandshake(c, h, b);
       }},
      {FRAME_META_REGISTER, FrameAccess::kAuthenticated, kHeader, 0,
       [](MetaServer &m, Connection &c, const FrameHeader &, std::string_view b) {
         m.HandleRegister(c, b);
       },
       kMetaNeedsServerKey},
      {FRAME_META_LOAD, FrameAccess::kAuthenticated, kHeader, 0,
       [](MetaServer &m, Connection &c, const FrameHeader &, std::string_view b) {
         m.HandleLoad(c, b);
       },
       kMetaNeedsServerKey},
      {FRAME_QUERY_INTERFACE, FrameAccess::kAuthenticated, kHeader, 0,
       [](MetaServer &m, Connection &c, const FrameHeader &, std::string_view b) {
         m.HandleQuery(c, b);
       }},
      {FRAME_LIST, FrameAccess::kAuthenticated, kHeader, 0,
       [](MetaServer &m, Connection &c, const FrameHeader &, std::string_view) {
         m.HandleList(c);
       }},
      {FRAME_META_PLACE, FrameAccess::kAuthenticated, kHeader, 0,
       [](MetaServer &m, Connection &c, const FrameHeader &, std::string_view b) {
         m.HandlePlace(c, b);
       }},
      {FRAME_META_OUTCOME, FrameAccess::kAuthenticated, kHeader, 0,
       [](MetaServer &m, Connection &c, const FrameHeader &, std::string_view b) {
         m.HandleOutcome(c, b);
       }},
      {FRAME_META_PROBED, FrameAccess::kAuthenticated, kHeader, 0,
       [](MetaServer &m, Connection &c, const FrameHeader &, std::string_view b) {
         m.HandleProbed(c, b);
       }},
      {FRAME_STATS, FrameAccess::kAuthenticated, kHeader, 0,
       [](MetaServer &m, Connection &c, const FrameHeader &, std::string_view b) {
         m.HandleStats(c, b);
       }},
  };
  return kRoutes;
}

void MetaServer::ServeHandshake(Connection &conn, const FrameHeader &h, std::string_view body) {
  ServeAuthFrame(conn, users_.ring(), h, body,
                 static_cast<uint64_t>(settings_.idle_timeout_seconds) * 1000,
                 &counters_.auth_failures);
}

void MetaServer::OnRequest(Connection &conn, const FrameHeader &h, std::string_view body) {
  // A key a reload took away serves nothing more on the connections it
  // opened (each request asks: one lookup).
  if (conn.auth().authenticated) {
    if (Status st = MayAsk(users_.Of(conn)); !st.ok()) {
      Refuse(conn, st);
      return;
    }
  }
  daemon::Dispatch(*this, Requests(), users_.NeedsKey(conn.transport().peer_subject()), conn, h,
                   body);
}

void MetaServer::Ack(Connection &conn, bool register_again) {
  wire::MetaAck ack;
  ack.set_report_ms(static_cast<uint32_t>(settings_.report_ms));
  ack.set_register_again(register_again);
  conn.Reply(FRAME_META_ACK, &ack);
}

void MetaServer::AckServer(Connection &conn, bool register_again, uint64_t held) {
  wire::MetaAck ack;
  ack.set_report_ms(static_cast<uint32_t>(settings_.report_ms));
  ack.set_register_again(register_again);
  // The servers a placed block's calls can have used: a ninfd lets its
  // calls read kept data from them (server/fetch_policy.h). Sent when they
  // changed since the list the server holds.
  ack.set_servers_version(servers_version_);
  constexpr int kMaxListed = 4096;
  if (held != servers_version_)
    for (const auto &[id, entry] : table_.servers()) {
      if (ack.servers_size() >= kMaxListed) break;
      ack.add_servers(entry.reg.address);
    }
  conn.Reply(FRAME_META_ACK, &ack);
}

void MetaServer::HandleRegister(Connection &conn, std::string_view body) {
  if (Status st = MayServe(users_.Of(conn)); !st.ok()) {
    Refuse(conn, st);
    return;
  }
  wire::ServerRegistration msg;
  if (!Parse(conn, body, &msg, "REGISTER")) return;
  HostPort hp;
  if (msg.server_id().empty() || msg.server_id().size() > 128 || msg.site().size() > kMaxSiteName ||
      !ParseHostPort(msg.address(), HostPort{"", 0}, &hp).ok() || hp.port <= 0) {
    conn.Fail(Status(NINF_ERR_INVALID_ARGUMENT,
                     "a registration needs a server id (up to 128 bytes), a site name (up "
                     "to 128) and the host:port clients call"));
    return;
  }
  Registration reg = RegistrationOf(msg, settings_);
  // Figures outside their range would be ranked as they are (a NaN load,
  // 2^32-1 slots): refused, with the field named.
  if (std::string bad = CheckRegistration(reg); !bad.empty()) {
    ++counters_.registrations_refused;
    daemon::RateLimitedWarn("registration_refused",
                            "event=registration_refused server={} peer={} reason={}",
                            Quoted(reg.id), conn.peer(), Quoted(bad));
    ReplyError(conn, Status(NINF_ERR_INVALID_ARGUMENT, "REGISTER: " + bad));
    return;
  }
  for (const wire::FunctionInterface &iface : msg.functions()) {
    if (!ValidateInterface(iface).ok()) continue;
    reg.functions.push_back(iface.name());
    reg.interfaces[iface.name()] = iface.SerializeAsString();
  }
  const std::string id = reg.id;
  const std::size_t functions = reg.functions.size();
  const bool replaced = Enter(conn, std::move(reg));
  spdlog::info(
      "event=server_registered server={} address={} site={} slots={} functions={} "
      "flops_per_second={:.3g} replaced={} servers={}",
      id, Quoted(msg.address()), Quoted(msg.site()), msg.slots(), functions, msg.flops_per_second(),
      replaced, table_.size());
  AckServer(conn, false, 0);
}

bool MetaServer::Enter(Connection &conn, Registration reg) {
  const std::string id = reg.id;
  // One server per connection: a connection registering another id stands
  // for a restarted server, whose old entry goes (so one peer cannot hold
  // more than one entry, and its functions, per connection).
  for (auto it = registered_by_.begin(); it != registered_by_.end();) {
    if (it->second == &conn && it->first != id) {
      table_.Drop(it->first);
      it = registered_by_.erase(it);
    } else {
      ++it;
    }
  }
  const bool replaced = table_.Register(std::move(reg), Now());
  ++servers_version_;  // (its drops above included)
  // Entries the table replaced (same address) are not this connection's.
  for (auto it = registered_by_.begin(); it != registered_by_.end();)
    it = table_.Find(it->first) ? std::next(it) : registered_by_.erase(it);
  registered_by_[id] = &conn;
  ++counters_.registrations;
  // A function another live server registered first with another interface
  // is not sent calls here while that server lives (a client must see one
  // signature per name); it is once that server leaves.
  for (const std::string &f : table_.Conflicts(id)) {
    ++counters_.interface_conflicts;
    const ServerEntry *owner = table_.InterfaceOwner(f);
    daemon::RateLimitedWarn(
        "interface_conflict", "event=interface_conflict server={} function={} owner={} message={}",
        id, Quoted(f), owner ? owner->reg.id : "-",
        Quoted("a live server registered a different interface first; this server is not sent "
               "calls of it until that server leaves or registers the same interface"));
  }
  return replaced;
}

void MetaServer::HandleLoad(Connection &conn, std::string_view body) {
  if (Status st = MayServe(users_.Of(conn)); !st.ok()) {
    Refuse(conn, st);
    return;
  }
  wire::LoadReport msg;
  if (!Parse(conn, body, &msg, "LOAD")) return;
  LoadSample s;
  s.running = msg.running();
  s.queued = msg.queued();
  s.arriving = msg.arriving();
  s.arriving_bytes = msg.arriving_bytes();
  s.arrival_waiting = msg.arrival_waiting();
  s.work_seconds = msg.work_seconds();
  s.load_average = msg.load_average();
  s.calls_admitted = msg.calls_admitted();
  s.startup_seconds = msg.startup_seconds();
  // Only samples of the server's registered functions are taken (the table
  // would drop the rest): a report padded with names costs its parse only.
  const ServerEntry *entry = table_.Find(msg.server_id());
  std::size_t unregistered = 0;
  for (const wire::FunctionLoad &f : msg.functions()) {
    if (entry && !entry->Serves(f.name())) {
      ++unregistered;
      continue;
    }
    s.functions.push_back({f.name(), f.calls(), f.mean_seconds(), f.flops_per_second(), f.warm()});
  }
  ++counters_.reports;
  if (std::string bad = CheckLoad(s); !bad.empty()) {
    ++counters_.reports_refused;
    daemon::RateLimitedWarn("report_refused", "event=report_refused server={} peer={} reason={}",
                            Quoted(msg.server_id()), conn.peer(), Quoted(bad));
    ReplyError(conn, Status(NINF_ERR_INVALID_ARGUMENT, "LOAD: " + bad));
    return;
  }
  // A report on another connection than the registration's (the server
  // reconnected without registering) is refused too: registration first.
  auto owner = registered_by_.find(msg.server_id());
  std::size_t ignored = 0;
  bool known = owner != registered_by_.end() && owner->second == &conn &&
               table_.Report(msg.server_id(), std::move(s), Now(), &ignored);
  ignored += unregistered;
  if (!known)
    spdlog::info("event=unknown_server server={} peer={} action=register_again",
                 Quoted(msg.server_id()), conn.peer());
  if (ignored > 0) {
    // Functions it never registered: dropped, and counted as the protocol
    // error they are (issue 28, H7: they once grew the table without end).
    counters_.report_functions_refused += ignored;
    ++counters_.protocol_errors;
    daemon::RateLimitedWarn("report_functions_refused",
                            "event=report_functions_refused server={} peer={} functions={}",
                            Quoted(msg.server_id()), conn.peer(), ignored);
  }
  AckServer(conn, !known, msg.servers_version());
}

void MetaServer::HandleQuery(Connection &conn, std::string_view body) {
  wire::QueryInterface q;
  if (!Parse(conn, body, &q, "QUERY_INTERFACE")) return;
  const ServerEntry *owner = table_.InterfaceOwner(q.name());
  wire::InterfaceReply reply;
  const std::string_view iface = owner ? owner->InterfaceOf(q.name()) : std::string_view();
  if (!owner ||
      !reply.mutable_iface()->ParseFromArray(iface.data(), static_cast<int>(iface.size()))) {
    ReplyError(conn, Status(NINF_ERR_FUNCTION_NOT_FOUND,
                            "no server registered with ninf-meta serves '" + q.name() + "'"));
    return;
  }
  conn.Reply(FRAME_INTERFACE, &reply);
}

void MetaServer::HandleList(Connection &conn) {
  std::set<std::string> names;
  for (const auto &[id, e] : table_.servers())
    names.insert(e.reg.functions.begin(), e.reg.functions.end());
  wire::ListReply reply;
  for (const std::string &n : names) reply.add_names(n);
  conn.Reply(FRAME_LIST_REPLY, &reply);
}

LinkModel *MetaServer::LinkFor(Connection &conn, const std::string &said,
                               const std::string &address) {
  const std::string site = SiteOf(conn, said);
  // Sites are named by clients: a bounded name. The link is the reporter's
  // own (its key and address), so a client claiming another's site name
  // changes only what it itself is told; the table evicts the least
  // recently used links beyond its caps.
  if (site.size() > kMaxSiteName) return nullptr;
  return &table_.LinkTo(site, Reporter(conn), address);
}

void MetaServer::HandlePlace(Connection &conn, std::string_view body) {
  wire::PlaceRequest req;
  if (!Parse(conn, body, &req, "PLACE")) return;
  const std::string site = SiteOf(conn, req.site());
  if (site.size() > kMaxSiteName) {
    ReplyError(conn, Status(NINF_ERR_INVALID_ARGUMENT,
                            "site name longer than " + std::to_string(kMaxSiteName) + " bytes"));
    return;
  }
  if (Status st = MayPlace(users_.principals(), users_.Of(conn), req.function(),
                           settings_.AllowOf(req.function()));
      !st.ok()) {
    ++counters_.placements_denied;
    // Rate-limited, as ninfd's refusals: a user asking again and again
    // must not flood the log (the counter has every one).
    daemon::RateLimitedWarn(
        "place_denied", "event=place_denied conn={} peer={} function={} error={}", conn.id(),
        conn.peer(), daemon::Quoted(req.function()), daemon::Quoted(st.message()));
    ReplyError(conn, st);
    return;
  }
  Placer::Answer answer = placer_.Place(req, site, Reporter(conn), Now());
  switch (answer.outcome) {
    case Placer::Outcome::kUnserved:
      ++counters_.placements_unserved;
      ReplyError(conn, answer.error);
      return;
    case Placer::Outcome::kProbe:
      ++counters_.probe_requests;
      break;
    case Placer::Outcome::kBreakdown:
      break;
    case Placer::Outcome::kPlaced:
      ++counters_.placements;
      break;
  }
  conn.Reply(FRAME_META_PLACEMENT, &answer.reply);
}

void MetaServer::HandleOutcome(Connection &conn, std::string_view body) {
  wire::CallOutcome msg;
  if (!Parse(conn, body, &msg, "OUTCOME")) return;
  // Only the client given the ticket may end its reservation (a ticket of
  // another's is refused and its figures not used).
  if (table_.Release(msg.server_id(), msg.ticket(), Reporter(conn)) ==
      ServerTable::Released::kNotYours) {
    ++counters_.outcomes_refused;
    daemon::RateLimitedWarn("outcome_refused", "event=outcome_refused peer={} server={}",
                            conn.peer(), Quoted(msg.server_id()));
    ReplyError(conn, Status(NINF_ERR_INVALID_ID, "OUTCOME: the ticket was not given to you"));
    return;
  }
  if (msg.error_code() == NINF_OK) {
    ++counters_.outcomes_ok;
    const ServerEntry *e = table_.Find(msg.server_id());
    if (e) {
      // Passive samples: the receive is timed from the first result byte
      // to the last, so it is the link's throughput; a send's time is only
      // the link's once the array outgrows the socket buffers. Small
      // transfers say nothing here (a send returns before the bytes land),
      // so latency comes from the probes.
      const double now = Now();
      if (LinkModel *link = LinkFor(conn, msg.site(), e->reg.address)) {
        if (msg.out_bytes() >= LinkModel::kSmallBytes && msg.out_seconds() > 0)
          link->AddTransfer(msg.out_bytes(), msg.out_seconds(), now);
        if (msg.in_bytes() >= (uint64_t{16} << 20) && msg.in_seconds() > 0)
          link->AddTransfer(msg.in_bytes(), msg.in_seconds(), now);
      }
    }
  } else {
    ++counters_.outcomes_failed;
    spdlog::info("event=call_failed ticket={} server={} code={}", msg.ticket(),
                 Quoted(msg.server_id()), msg.error_code());
  }
  Ack(conn);
}

void MetaServer::HandleProbed(Connection &conn, std::string_view body) {
  wire::ProbeOutcome msg;
  if (!Parse(conn, body, &msg, "PROBED")) return;
  const ServerEntry *e = table_.Find(msg.server_id());
  LinkModel *link = e ? LinkFor(conn, msg.site(), e->reg.address) : nullptr;
  if (link && link->AddProbe(msg.small_bytes(), msg.small_seconds(), msg.large_bytes(),
                             msg.large_seconds(), Now()))
    ++counters_.probes;
  Ack(conn);
}

void MetaServer::OnLeaseTimer(uv_timer_t *timer) {
  static_cast<MetaServer *>(timer->data)->ExpireLeases();
}

void MetaServer::ExpireLeases() {
  for (const std::string &id : table_.Expire(Now())) {
    ++counters_.servers_expired;
    ++servers_version_;
    registered_by_.erase(id);
    spdlog::warn("event=server_left server={} reason=lease_expired servers={}", id, table_.size());
  }
}

void MetaServer::HandleStats(Connection &conn, std::string_view body) {
  wire::StatsRequest req;
  if (!Parse(conn, body, &req, "STATS")) return;
  wire::StatsReply reply;
  if (req.view().empty())
    reply.set_text(StatusText(CurrentGauges(), counters_));
  else if (req.view() == "servers")
    reply.set_text(ServersText(table_, Now()));
  else if (req.view() == "links")
    reply.set_text(LinksText(table_, Now()));
  else {
    ReplyError(conn, Status(NINF_ERR_INVALID_ARGUMENT,
                            "unknown view '" + req.view() + "' (servers, links)"));
    return;
  }
  conn.Reply(FRAME_STATS_REPLY, &reply);
}

MetaGauges MetaServer::CurrentGauges() const {
  MetaGauges g;
  g.version = NINF_VERSION;
  g.pid = ::getpid();
  g.uptime_seconds = Now();
  g.policy = std::string(PolicyName(policy_));
  g.servers = table_.size();
  g.functions = FunctionCount(table_);
  g.links = table_.link_count();
  g.links_evicted = table_.links_evicted();
  g.connections = connections_.size();
  return g;
}

}  // namespace ninf::meta
