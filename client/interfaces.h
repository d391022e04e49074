// The interface cache: function interfaces, fetched from the server on
// first use and cached per "host:port/name": a function's interface does
// not change while its server runs, and the cache is what lets Ninf_call
// take a bare argument list. A server's reply may also name its same-host
// socket, which connecting (connect.h) then takes.
//
// Builds on protocol/ (wire.h frames on a connection opened by connect.h,
// layout.h's ValidateInterface), arguments.h (for InterfacePtr only) and
// connect.h (where same-host paths are remembered).
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

}  // namespace ninf::client
