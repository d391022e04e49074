// Server: its keys and its connections' authentication (the handshake is
// daemon/auth_handshake.h). The executables need no check of their own: they
// only ever get connections that passed here.
#include <set>

#include "daemon/auth_handshake.h"
#include "daemon/log.h"
#include "server/server.h"

namespace ninf::server {

Status Server::LoadKeys() {
  std::set<std::string> gone;
  if (Status st = users_.Load(&gone); !st.ok()) {
    settings_.users = users_in_force_;  // the users stay as their keys do
    return st;
  }
  users_in_force_ = settings_.users;
  // A user that is gone (its table or its keys removed: revoked) keeps
  // nothing here: its kept data is released now, not at its expiry.
  for (const std::string &user : gone) {
    const std::size_t released = kept_.ReleaseUser(user);
    spdlog::info("event=user_revoked user={} released={}", user, released);
  }
  return Status::Ok();
}

void Server::HandleAuth(daemon::Connection &conn, const FrameHeader &h, std::string_view body) {
  daemon::ServeAuthFrame(conn, users_.ring(), h, body,
                         static_cast<uint64_t>(settings_.idle_timeout_seconds) * 1000,
                         &counters_.auth_failures);
}

}  // namespace ninf::server
