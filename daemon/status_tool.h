// `ninfd --status` (and ninf-meta's): asks a running daemon for its statistics (FRAME_STATS)
// and prints the `name:value` lines, so that administrators and scripts need
// no client library for a health check. `--list` prints the functions it
// serves (FRAME_LIST, then FRAME_QUERY_INTERFACE for each), one signature a
// line.
#pragma once

#include <string>

#include "protocol/address.h"
#include "protocol/status.h"
#include "protocol/tls.h"

namespace ninf::daemon {

// How a tool reaches a daemon: the key it proves (the daemon's own key_file
// setting: --status asks with the daemon's key; "" none) and, with tls.ca
// set, TLS verified against those trust anchors first, showing tls.cert and
// tls.key to a daemon that asks for a client certificate (ninfd's tls_ca,
// tls_cert, tls_key: the same NINF_TLS_* variables as the C client's).
struct ToolAccess {
  std::string key_file{};
  tls::ClientFiles tls{};
};

// Connects to `target` (host:port, or a reverse server's name@relay:port:
// through its relay, as a client's call goes) as `access` says (TLS, then
// the key), sends FRAME_STATS and stores the reply text in *text. Errors: NINF_ERR_CONFIG
// for a bad key or TLS file, NINF_ERR_CONNECT, NINF_ERR_TIMEOUT,
// NINF_ERR_AUTH, or what the daemon answered.
// `view` selects a table other than the statistics (ninf-meta: "servers",
// "links"; "" for the statistics).
Status QueryStats(const HostPort &target, int timeout_ms, const ToolAccess &access,
                  std::string *text, const std::string &view = "");

// The whole of `ninfd --status` / `ninf-meta --status`: asks the daemon at
// `server` (host:port), or else at its own listen address and port, and
// prints the reply to stdout. Returns the process exit code (1 with a
// message on stderr, naming `program`, when it cannot).
int PrintStats(const char *program, const std::string &listen, int port, const std::string &server,
               const ToolAccess &access, const std::string &view = "");

// The whole of `ninfd --list` / `ninf-meta --list`: the functions the
// daemon at `server` (or listen:port) serves, sorted, one line each:
//   NAME(MODE TYPE PARAM, ...)  [MPI]  description
// Returns the process exit code, as PrintStats.
int PrintFunctions(const char *program, const std::string &listen, int port,
                   const std::string &server, const ToolAccess &access);

}  // namespace ninf::daemon
