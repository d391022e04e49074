// Whether a daemon may listen where it is told to, given its keys: the one
// security check both daemons make before they bind. Builds on protocol/
// (Status) only.
#pragma once

#include <string_view>

#include "protocol/status.h"

namespace ninf::daemon {

// Without a key, anyone who reaches the port may call it (ninfd: run the
// registry's functions): fine on loopback, where only local users can,
// refused anywhere else unless the operator says `insecure` on purpose.

// Whether `listen` names only this host: 127.0.0.0/8, ::1, "localhost".
// Any other name counts as exposed (it may resolve to anything).
bool IsLoopbackAddress(std::string_view listen);

// Errors: NINF_ERR_CONFIG for a non-loopback `listen` without a key when
// `insecure` is false, saying what to do.
Status CheckExposure(std::string_view listen, bool has_key, bool insecure);

}  // namespace ninf::daemon
