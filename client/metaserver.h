// The client's side of the metaserver (docs/metaserver.md). With
// NINF_METASERVER=host:port (or `metaserver` in the client config), a bare
// function name is placed by ninf-meta:
//
//   interface  asked of the metaserver (any server of the function has it)
//   placement  PLACE with the call's CalcOrder and bytes -> servers, best
//              first; if some links from this site have no fresh sample,
//              the metaserver names them and the client probes them first
//   the call   straight to the first server (arrays never pass ninf-meta);
//              if it fails before any result byte, on the next one
//   outcome    bytes and times of each attempt, for the link forecasts
//
// `ninf://host:port/f` still goes straight to that server. With the
// metaserver unreachable, calls go to the configured servers instead
// (FallbackServers). Metaserver connections are kept in a small pool.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "client/arguments.h"
#include "client/server_address.h"
#include "ninf.pb.h"
#include "protocol/status.h"

namespace ninf::client {

// The metaserver in force: the one SetMetaserver gave (grpc_initialize's
// config), else NINF_METASERVER. False when there is none. Errors: a
// malformed NINF_METASERVER (NINF_ERR_CONFIG) in *error.
bool ConfiguredMetaserver(ServerAddress *out, Status *error);
void SetMetaserver(const std::optional<ServerAddress> &meta);

// This client's site: NINF_SITE, or "" (the metaserver then takes the
// client's address).
std::string ClientSite();

// Where calls go when the metaserver cannot be reached: the default server
// (Ninf_set_server, NINF_SERVER or the config's default_server), then the
// config's [servers], in order, without repeats.
std::vector<ServerAddress> FallbackServers();
void SetFallbackServers(std::vector<ServerAddress> servers);

// Whether a metaserver error means "not reachable" (fall back) rather than
// an answer (function unknown, bad request).
bool MetaserverUnreachable(const Status &st);

// Whether an attempt that failed this way, before any result byte, may be
// tried on another server: the server was unreachable, died, refused or
// did not serve the function. Argument and limit errors would fail anywhere.
bool RetryElsewhere(const Status &st);

// The function's interface, from the metaserver (cached like a server's).
// Errors: NINF_ERR_FUNCTION_NOT_FOUND when no registered server serves it,
// connection errors.
Status MetaInterface(const ServerAddress &meta, const std::string &function, InterfacePtr *out);

// Asks where a call goes. Probes the links the metaserver asks about, from
// this client, reports them, and asks again. Errors: what the metaserver
// answered (NINF_ERR_FUNCTION_NOT_FOUND; NINF_ERR_SERVER when every server
// of the function is excluded), connection errors.
Status MetaPlace(const ServerAddress &meta, wire::PlaceRequest request, wire::Placement *out);

// Tells the metaserver how an attempt went. Best effort: a lost report
// costs one link sample, never the call.
void MetaReportOutcome(const ServerAddress &meta, const wire::CallOutcome &outcome);

// One NWS-style probe of the link to `server`: FRAME_PROBE with `small` and
// then `large` payload bytes, each timed until its reply.
Status ProbeLink(const ServerAddress &server, uint64_t small, uint64_t large,
                 wire::ProbeOutcome *out);

}  // namespace ninf::client
