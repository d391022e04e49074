// The authentication handshake of a daemon's connections, shared by ninfd,
// ninf-meta and ninf-relay (the exchange itself is in protocol/auth.h).
#pragma once

#include <cstdint>
#include <string_view>

#include "daemon/connection.h"
#include "daemon/users.h"
#include "protocol/auth.h"
#include "protocol/frame.h"

namespace ninf::daemon {

// Serves one frame of a connection that has not proved it holds a key:
// FRAME_AUTH gets the challenge, FRAME_PROOF is checked; anything else, an
// unknown key or a wrong proof ends the connection with NINF_ERR_AUTH (and
// counts one in *failures). Once proved, the connection's idle timeout
// becomes `idle_timeout_ms`. With no keys, a client asking to authenticate
// is refused: the daemon cannot prove who it is. The refusal of a first
// frame that is not AUTH names what the peer must set: a client's key file
// (NINF_KEY_FILE), or what that frame's row of the daemon's table says
// (FrameRoute::unkeyed_refusal: ninf-meta's META_REGISTER and ninf-relay's
// RELAY_REGISTER name ninfd's own key file).
void ServeAuthFrame(Connection &conn, const auth::KeyRing &keys, const FrameHeader &h,
                    std::string_view body, uint64_t idle_timeout_ms, uint64_t *failures);

// SIGHUP: reads the key file `path` again into *keys, so that a key is
// rotated without a restart and open connections stay; a file that cannot
// be read keeps the keys in use (event=reload_failed). "": no-op (a daemon
// started without keys stays keyless until restarted).
void ReloadKeyFile(const std::string &path, auth::KeyRing *keys);

// What a connection proved, for Identify (users.h): the key of its
// handshake, its verified client certificate's subject.
Proved ProvedBy(const Connection &conn);

}  // namespace ninf::daemon
