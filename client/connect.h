// Connecting: a connection to ninfd with the client's timeouts and key
// (auth.h), over the Unix-domain socket of a server on this host when one
// is known (checked against the server's pid) or TCP, and the connection
// to the executable that ninfd redirects a call to. Which servers are on
// this host is learned from their interface replies (interfaces.cc) and
// remembered here.
//
// Builds on protocol/ (wire.h: Channel, ConnectTcp, ConnectUnix, PeerPid),
// auth.h (the key exchange), options.h (timeouts, transport, key file) and
// server_address.h. Below the wire exchange (exchange.h) and the interface
// cache (interfaces.h); knows nothing of argument lists.
#pragma once

#include <memory>
#include <string>

#include "client/server_address.h"
#include "protocol/status.h"
#include "protocol/wire.h"

namespace ninf::client {

// Opens a connection to ninfd with the client's timeouts. `tcp_only`: over
// TCP even when the server is known to offer a same-host path (link probes
// measure the network).
// A server that cannot be reached gets advice appended to the error: where
// its address came from (NINF_SERVER, -server, ...) and how to change it
// (UnreachableAdvice, server_address.h).
Status ConnectToServer(const ServerAddress &server, std::unique_ptr<Channel> *out,
                       bool tcp_only = false);

// The same for ninf-meta, whose address comes from elsewhere
// (NINF_METASERVER, the config's metaserver): its errors carry no advice
// about the default server.
Status ConnectToMetaserver(const ServerAddress &meta, std::unique_ptr<Channel> *out);

// `server`, reached over loopback TCP, also listens on the Unix-domain
// socket `path` as process `pid`: later connections to it take that path.
void RememberSameHostPath(const ServerAddress &server, const std::string &path, int pid);

// Whether ConnectToServer(server) tries a same-host path now: a call whose
// interface was just asked over loopback TCP reconnects to send its
// arguments that way (shared memory, no TCP copies).
bool TakesSameHostPath(const ServerAddress &server);

// A TCP connection whose exchange is complete (the whole result read, or a
// two-phase ticket): its close will send a reset instead of a FIN, so that
// no TIME_WAIT socket stays on this side for a minute. Whoever closes
// first keeps that socket; a client making one-shot calls to one server
// over TCP kept one per call and, beyond ~28,000 (the ephemeral ports),
// slowed to ~470 calls/s and then failed to connect (bench/results/peers.md).
// Nothing is owed on such a connection: the server has sent everything,
// and its end is ninfd's parked copy and an executable that is done.
void CloseWithoutTimeWait(Channel &ch);

// The answer to FRAME_CALL of a function whose executables run where a
// launcher puts them: ninfd names the executable, and `ch` becomes a
// connection to it (protocol/ninf.proto, Redirect).
Status FollowRedirect(Channel &ch);

// The answer to FRAME_CALL on a TLS connection: ninfd's FRAME_HANDOVER
// (after heartbeats while the call waits, or an ERROR), whose key then
// authenticates a new TLS session with the executable on the same socket
// (docs/protocol.md). The call's frames go through that session.
Status TakeHandover(Channel &ch);

}  // namespace ninf::client
