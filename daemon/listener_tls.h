// The TLS context of a daemon's listener from its tls_cert, tls_key and
// tls_client_ca settings, at start and on SIGHUP: the same rules for ninfd
// and ninf-meta. Builds on protocol/tls.h.
#pragma once

#include "protocol/status.h"
#include "protocol/tls.h"

namespace ninf::daemon {

// Without files.cert: no TLS (*ctx emptied), and a key or CA alone is an
// error (NINF_ERR_CONFIG). With it: a new context from the files, which
// replaces *ctx only once built; connections already open keep the one they
// were made with. Errors: NINF_ERR_CONFIG naming the file and the setting.
Status LoadListenerTls(const tls::ServerFiles &files, tls::Context *ctx);

}  // namespace ninf::daemon
