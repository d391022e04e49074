// Server: its keys and its connections' authentication (the handshake is
// daemon/auth_handshake.h). The executables need no check of their own: they
// only ever get connections that passed here.
#include "daemon/auth_handshake.h"
#include "server/server.h"

namespace ninf::server {

Status Server::LoadKeys() {
  if (settings_.key_file.empty()) return Status::Ok();
  auth::KeyRing ring;
  NINF_RETURN_IF_ERROR(auth::LoadKeyFile(settings_.key_file, &ring));
  keys_ = std::move(ring);
  return Status::Ok();
}

void Server::HandleAuth(daemon::Connection &conn, const FrameHeader &h, std::string_view body) {
  daemon::ServeAuthFrame(conn, keys_, h, body,
                         static_cast<uint64_t>(settings_.idle_timeout_seconds) * 1000,
                         &counters_.auth_failures);
}

}  // namespace ninf::server
