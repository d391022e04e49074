// Whether a daemon may listen where it is told to, given its keys: the one
// security check both daemons make before they bind. Builds on protocol/
// (Status) only.
#pragma once

#include <string_view>

#include "protocol/status.h"

namespace ninf::daemon {

// Without a key, anyone who reaches the port may call it (ninfd: run the
// registry's functions); without TLS, anyone on the path reads the calls:
// fine on loopback, where only local users can, refused anywhere else
// unless the operator says so on purpose (`insecure`, `allow_plaintext`).

// Whether `listen` names only this host: 127.0.0.0/8, ::1, "localhost".
// Any other name counts as exposed (it may resolve to anything).
bool IsLoopbackAddress(std::string_view listen);

// What a daemon is about to serve, and the operator's waivers.
struct Exposure {
  std::string_view listen;  // the address (for ninfd --reverse: its relay's)
  bool key = false;         // clients must prove a key (key_file)
  bool tls = true;          // its connections there are TLS (tls_cert); the relay has none
  bool insecure = false;    // no key, on purpose (and so no TLS needed either)
  bool plaintext = false;   // allow_plaintext: keys, but no TLS, on purpose
};

// Errors: NINF_ERR_CONFIG, saying what to do, for a non-loopback address
// without a key (unless insecure), or with a key but without TLS (unless
// insecure or plaintext): keys prove who calls, and only TLS keeps the
// arrays and the results from everyone on the path.
Status CheckExposure(const Exposure &e);

}  // namespace ninf::daemon
