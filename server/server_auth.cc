// Server: its keys and its connections' authentication (the handshake is
// daemon/auth_handshake.h). The executables need no check of their own: they
// only ever get connections that passed here.
#include <set>

#include "daemon/auth_handshake.h"
#include "daemon/log.h"
#include "server/server.h"

namespace ninf::server {

Status Server::LoadKeys() {
  Principals fresh;
  if (Status st = LoadPrincipals(settings_.key_file, settings_.Users(), &fresh); !st.ok()) {
    settings_.users = users_in_force_;  // the users stay as their keys do
    return st;
  }
  // A user that is gone (its table or its keys removed: revoked) keeps
  // nothing here: its kept data is released now, not at its expiry.
  std::set<std::string> gone;
  for (const auto &[key, user] : principals_.user_of_key) gone.insert(user);
  for (const auto &[subject, user] : principals_.user_of_subject) gone.insert(user);
  for (const auto &[key, user] : fresh.user_of_key) gone.erase(user);
  for (const auto &[subject, user] : fresh.user_of_subject) gone.erase(user);
  principals_ = std::move(fresh);
  users_in_force_ = settings_.users;
  for (const std::string &user : gone) {
    const std::size_t released = kept_.ReleaseUser(user);
    spdlog::info("event=user_revoked user={} released={}", user, released);
  }
  return Status::Ok();
}

void Server::HandleAuth(daemon::Connection &conn, const FrameHeader &h, std::string_view body) {
  daemon::ServeAuthFrame(conn, principals_.ring, h, body,
                         static_cast<uint64_t>(settings_.idle_timeout_seconds) * 1000,
                         &counters_.auth_failures);
}

bool Server::NeedsKey(daemon::Connection &conn) const {
  if (!auth_required()) return false;
  const std::string subject = conn.peer_subject();
  return subject.empty() || !principals_.user_of_subject.count(subject);
}

bool Server::RefuseRevoked(daemon::Connection &conn) {
  if (!conn.auth().authenticated || !IdentityOf(principals_, conn).revoked) return false;
  ++counters_.auth_failures;
  ++counters_.denied;
  daemon::RateLimitedWarn("revoked", "event=revoked conn={} peer={} reason={}", conn.id(),
                          conn.peer(), daemon::Quoted("the key it proved was removed by a reload"));
  conn.Fail(Status(NINF_ERR_AUTH,
                   "this connection's key was revoked: the server no longer knows its user"));
  return true;
}

Status Server::MayRun(const Identity &who, const std::string &function) const {
  if (who.revoked)
    return Status(NINF_ERR_AUTH,
                  "the user of this call was revoked: its key is no longer "
                  "this server's");
  if (!MayCall(principals_, who.user, settings_.LimitsOf(function).allow))
    return Status(NINF_ERR_DENIED, "user '" + std::string(ShownUser(who.user)) +
                                       "' may not call '" + function +
                                       "' here (its allow list in [limits." + function +
                                       "] names neither the user nor one of its groups)");
  return Status::Ok();
}

void Server::NoteDenied(daemon::Connection *conn, const std::string &user,
                        const std::string &function, const Status &why) {
  ++counters_.denied;
  ++counters_.users[LabelOf(user)].denied;
  daemon::RateLimitedWarn("call_denied",
                          "event=call_denied conn={} peer={} function={} user={} "
                          "error={}",
                          conn ? conn->id() : 0, conn ? conn->peer() : "-",
                          daemon::Quoted(function), ShownUser(user), daemon::Quoted(why.message()));
}

std::string Server::LabelOf(const std::string &user) {
  return UserLabel(&counters_.user_labels, user,
                   static_cast<std::size_t>(settings_.user_metric_labels));
}

}  // namespace ninf::server
