// Server: the requests a connection sends. QUERY, LIST and STATS are
// answered here; a CALL becomes a job of the scheduler, COLLECT, RELEASE and
// FETCH go to the kept data.
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "daemon/log.h"
#include "ninf.pb.h"
#include "server/server.h"
#include "server/watch_policy.h"

namespace ninf::server {
namespace {

void ReplyError(daemon::Connection &conn, const Status &st) {
  wire::Error err;
  EncodeError(st, &err);
  conn.Reply(FRAME_ERROR, &err);
}

// A request of a connection whose key a reload took away: refused, the
// connection ends (true).
bool RefuseRevoked(const UserPolicy &users, Counters *counters, daemon::Connection &conn) {
  if (!conn.auth().authenticated || !users.Of(conn).revoked) return false;
  ++counters->auth_failures;
  ++counters->denied;
  daemon::RateLimitedWarn("revoked", "event=revoked conn={} peer={} reason={}", conn.id(),
                          conn.peer(), daemon::Quoted("the key it proved was removed by a reload"));
  conn.Fail(Status(NINF_ERR_AUTH,
                   "this connection's key was revoked: the server no longer knows its user"));
  return true;
}

// Counts and logs (rate-limited) a call refused by MayRun.
void NoteDenied(Counters *counters, const Settings &settings, daemon::Connection *conn,
                const std::string &user, const std::string &function, const Status &why) {
  ++counters->denied;
  ++counters->users[UserLabelOf(counters, settings, user)].denied;
  daemon::RateLimitedWarn("call_denied",
                          "event=call_denied conn={} peer={} function={} user={} "
                          "error={}",
                          conn ? conn->id() : 0, conn ? conn->peer() : "-",
                          daemon::Quoted(function), ShownUser(user), daemon::Quoted(why.message()));
}

}  // namespace

std::span<const daemon::FrameRoute<Server>> Server::Requests() {
  using daemon::FrameAccess;
  using Route = daemon::FrameRoute<Server>;
  constexpr uint32_t kHeader = kMaxRequestHeader;
  static const Route kRoutes[] = {
      {FRAME_AUTH, FrameAccess::kHandshake, kHeader, 0,
       [](Server &s, daemon::Connection &c, const FrameHeader &h, std::string_view b) {
         s.HandleAuth(c, h, b);
       }},
      {FRAME_PROOF, FrameAccess::kHandshake, kHeader, 0,
       [](Server &s, daemon::Connection &c, const FrameHeader &h, std::string_view b) {
         s.HandleAuth(c, h, b);
       }},
      // FETCH: the executable of a call of the block reads a kept array,
      // authenticated with the block's key like any client (control.h:
      // CTL_PROVE), and holding the entry's token.
      {FRAME_FETCH, FrameAccess::kAuthenticated, kHeader, 0,
       [](Server &s, daemon::Connection &c, const FrameHeader &, std::string_view b) {
         s.kept_.HandleFetch(c, b);
       }},
      {FRAME_QUERY_INTERFACE, FrameAccess::kAuthenticated, kHeader, 0,
       [](Server &s, daemon::Connection &c, const FrameHeader &, std::string_view b) {
         s.HandleQuery(c, b);
       }},
      {FRAME_LIST, FrameAccess::kAuthenticated, kHeader, 0,
       [](Server &s, daemon::Connection &c, const FrameHeader &, std::string_view) {
         s.HandleList(c);
       }},
      {FRAME_STATS, FrameAccess::kAuthenticated, kHeader, 0,
       [](Server &s, daemon::Connection &c, const FrameHeader &, std::string_view) {
         s.HandleStats(c);
       }},
      {FRAME_CALL, FrameAccess::kAuthenticated, kHeader, 0,
       [](Server &s, daemon::Connection &c, const FrameHeader &, std::string_view b) {
         s.HandleCall(c, b);
       }},
      {FRAME_COLLECT, FrameAccess::kAuthenticated, kHeader, 0,
       [](Server &s, daemon::Connection &c, const FrameHeader &, std::string_view b) {
         s.kept_.HandleCollect(c, b);
       }},
      {FRAME_RELEASE, FrameAccess::kAuthenticated, kHeader, 0,
       [](Server &s, daemon::Connection &c, const FrameHeader &, std::string_view b) {
         s.kept_.HandleRelease(c, b);
       }},
      // The payload was read and dropped: the answer is the measurement.
      {FRAME_PROBE, FrameAccess::kAuthenticated, kHeader, kMaxProbePayload,
       [](Server &, daemon::Connection &c, const FrameHeader &, std::string_view) {
         c.Reply(FRAME_PROBE_REPLY, nullptr);
       }},
  };
  return kRoutes;
}

const daemon::RequestRules &NinfdRequestRules() {
  static const daemon::RequestRules rules = daemon::RulesOf("ninfd", Server::Requests());
  return rules;
}

void Server::OnRequest(daemon::Connection &conn, const FrameHeader &h, std::string_view body) {
  // A revoked user's connection is served nothing more (the handshake
  // frames themselves are the dispatcher's to refuse).
  if (h.type != FRAME_AUTH && h.type != FRAME_PROOF && RefuseRevoked(users_, &counters_, conn))
    return;
  daemon::Dispatch(*this, Requests(), users_.NeedsKey(conn.transport().peer_subject()), conn, h,
                   body);
}

void Server::HandleQuery(daemon::Connection &conn, std::string_view body) {
  wire::QueryInterface query;
  if (!query.ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    Status st(NINF_ERR_PROTOCOL, "malformed QUERY_INTERFACE message");
    OnProtocolError(conn, st);
    conn.Fail(st);
    return;
  }
  const FunctionEntry *entry = registry_.Find(query.name());
  spdlog::debug("event=query conn={} peer={} function={} found={}", conn.id(), conn.peer(),
                daemon::Quoted(query.name()), entry != nullptr);
  if (!entry) {
    ReplyError(conn, Status(NINF_ERR_FUNCTION_NOT_FOUND,
                            "no function '" + query.name() + "' on this server"));
    return;
  }
  wire::InterfaceReply reply;
  *reply.mutable_iface() = ServedInterface(*entry);
  if (!unix_path_.empty()) {  // clients on this host may switch to it
    reply.set_unix_socket(unix_path_);
    reply.set_server_pid(static_cast<uint32_t>(::getpid()));
  }
  conn.Reply(FRAME_INTERFACE, &reply);
}

void Server::HandleList(daemon::Connection &conn) {
  wire::ListReply reply;
  for (const std::string &name : registry_.Names()) reply.add_names(name);
  spdlog::debug("event=list conn={} peer={} functions={}", conn.id(), conn.peer(),
                reply.names_size());
  conn.Reply(FRAME_LIST_REPLY, &reply);
}

void Server::HandleStats(daemon::Connection &conn) {
  wire::StatsReply reply;
  // A user sees its own user.LABEL.* lines only, unless it is an operator
  // (users.h UserSpec::role): who called what is not every user's business.
  const Identity who = users_.Of(conn);
  if (users_.SeesEveryUser(who)) {
    reply.set_text(StatsText());
  } else {
    const std::string own = OwnStatsLabel(counters_.user_labels, who.user,
                                          static_cast<std::size_t>(settings_.user_metric_labels));
    reply.set_text(StatsText(&own));
  }
  spdlog::debug("event=stats conn={} peer={}", conn.id(), conn.peer());
  conn.Reply(FRAME_STATS_REPLY, &reply);
}

void Server::HandleCall(daemon::Connection &conn, std::string_view body) {
  wire::CallRequest req;
  if (!req.ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    Status st(NINF_ERR_PROTOCOL, "malformed CALL message");
    OnProtocolError(conn, st);
    conn.Fail(st);
    return;
  }
  const FunctionEntry *entry = registry_.Find(req.name());
  if (!entry) {
    daemon::RateLimitedInfo("call_unknown",
                            "event=call_unknown conn={} peer={} call={} function={}", conn.id(),
                            conn.peer(), req.call_id(), daemon::Quoted(req.name()));
    conn.Fail(Status(NINF_ERR_FUNCTION_NOT_FOUND,
                     "no function " + daemon::Quoted(req.name()) + " on this server"));
    return;
  }
  const Identity who = users_.Of(conn);
  if (Status st = users_.MayRun(who, req.name()); !st.ok()) {
    NoteDenied(&counters_, settings_, &conn, who.user, req.name(), st);
    conn.Fail(st);
    return;
  }
  // The first users seen get a label of their own.
  (void)UserLabelOf(&counters_, settings_, who.user);
  CallParams params = ParamsOf(req, *entry, conn);
  const bool redirected = scheduler_.executables().LaunchOf(req.name()).over_tcp;
  if (req.submit() && redirected) {
    conn.Fail(Status(NINF_ERR_NOT_SUPPORTED,
                     "'" + req.name() +
                         "' runs on another host than ninfd (launch_address): it cannot serve "
                         "a two-phase call"));
    return;
  }
  if (req.submit()) {
    if (Status st = kept_.ReserveResult(req.keep_bytes(), &params); !st.ok()) {
      spdlog::info("event=submit_refused conn={} peer={} call={} function={} user={} error={}",
                   conn.id(), conn.peer(), req.call_id(), daemon::Quoted(req.name()),
                   ShownUser(params.owner), daemon::Quoted(st.message()));
      conn.Fail(st);
      return;
    }
  }
  scheduler_.Submit(conn, std::move(params), redirected);
}

CallParams Server::ParamsOf(const wire::CallRequest &req, const FunctionEntry &entry,
                            daemon::Connection &conn) const {
  CallParams params;
  params.call_id = req.call_id();
  params.function = req.name();
  params.executable = entry.executable;
  params.persistent = req.persistent();
  params.may_keep_slot = settings_.keep_handle_slots;
  params.reuse = !entry.iface.no_reuse();
  params.heartbeat_ms = HeartbeatPeriodMs(req.heartbeat_ms(),
                                          static_cast<uint32_t>(settings_.liveness_seconds * 1000));
  params.limits = settings_.LimitsOf(req.name());
  params.redirect_wait_ms = static_cast<uint32_t>(settings_.request_timeout_seconds * 1000);
  params.redirect_tls = conn.transport().active() || !settings_.tls_cert.empty();
  params.work_flops = std::isfinite(req.work_flops()) ? std::max(0.0, req.work_flops()) : 0;
  params.owner = users_.Of(conn).user;
  params.key_id = conn.auth().authenticated ? conn.auth().key_id : std::string();
  params.run_as = users_.RunAsOf(params.owner);
  return params;
}

wire::FunctionInterface Server::ServedInterface(const FunctionEntry &entry) const {
  wire::FunctionInterface iface = entry.iface;
  iface.set_redirect(LaunchFor(entry.iface, settings_, cores_, ::geteuid() == 0).over_tcp);
  iface.set_fetch_tls(!settings_.tls_ca.empty());
  return iface;
}

}  // namespace ninf::server
