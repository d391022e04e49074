// Where a call's executable may fetch kept data from (docs/transactions.md,
// docs/security.md "Hops"). A data reference in a call's arguments names the
// ninfd that keeps the array by "ip:port" (or "unix:/path" on the same host),
// and the executable dials it before anything proves who listens there: a
// client could otherwise send a server's executables to knock on any
// address of the server's network. They dial only
//   - this ninfd itself: its port on one of its host's addresses, or its
//     same-host socket;
//   - the servers the metaserver this ninfd reports to lists (their
//     advertised addresses, and the numeric ones those resolve to): the
//     servers a placed call's block can have used;
//   - the addresses of the `fetch_from` setting (servers a client calls
//     directly, without a metaserver).
// A pure function of those lists; the daemon gathers them (Server) and asks
// per reference (KeptDataService, CTL_FETCH_ASK).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "protocol/status.h"

namespace ninf::server {

struct FetchPeers {
  int own_port = 0;
  std::string own_unix_path;           // "" when ninfd has none
  std::vector<std::string> local_ips;  // this host's addresses, numeric ("127.0.0.1", "::1")
  std::set<std::string> listed;        // "host:port" from the metaserver
  bool metaserver = false;             // ninfd reports to one (listed may be behind it)
  std::set<std::string> configured;    // fetch_from
};

// `fetch_from`'s text: addresses separated by commas (blanks ignored), each
// "ip:port" or "unix:/path" (a same-host ninfd's socket, which same-host
// clients' references name). Errors: NINF_ERR_CONFIG naming the entry that
// is neither.
Status ParseFetchFrom(const std::string &text, std::set<std::string> *out);

// Ok, or NINF_ERR_AUTH saying which address was refused and what to set;
// NINF_ERR_TIMEOUT in its place when a metaserver may list it soon (a
// server that registered since ninfd last heard the list): ask again once
// the list is fresh.
Status MayFetchFrom(const std::string &address, const FetchPeers &peers);

}  // namespace ninf::server
