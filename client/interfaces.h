// Function interfaces, fetched from the server on first use and cached per
// "host:port/name": a function's interface does not change while its server
// runs, and the cache is what lets Ninf_call take a bare argument list.
#pragma once

#include <string>

#include "client/arguments.h"
#include "client/server_address.h"
#include "protocol/wire.h"

namespace ninf::client {

// Returns the interface of `function` on `server`: from the cache, or asked
// for on `ch` (an open connection to ninfd). Errors: whatever the server
// says (NINF_ERR_FUNCTION_NOT_FOUND), a malformed interface.
Status GetInterface(const ServerAddress &server, const std::string &function, Channel &ch,
                    InterfacePtr *out);

// The cached interface, or null.
InterfacePtr CachedInterface(const ServerAddress &server, const std::string &function);

// Opens a connection to ninfd with the client's timeouts. `tcp_only`: over
// TCP even when the server is known to offer a same-host path (link probes
// measure the network).
Status ConnectToServer(const ServerAddress &server, std::unique_ptr<Channel> *out,
                       bool tcp_only = false);

}  // namespace ninf::client
