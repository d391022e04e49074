// Executables that ninfd does not start itself: MPI jobs (mpirun starts the
// ranks) and Slurm steps (slurmstepd does). Such a process is not ninfd's
// child, and the launchers close every descriptor above 2 in what they
// start, so it cannot inherit the control channel as fd 3. It claims its
// channel instead, by connecting back to ninfd:
//
//   ninfd                                  rank 0 of the executable
//     socketpair: its end = the Process's control channel, the other kept
//     launcher started with NINF_LAUNCH_SOCKET=PATH, NINF_LAUNCH_TOKEN=HEX
//                         <── connect(PATH) (Unix stream socket)
//                         <── "HEX\n"  (the one-time token)
//     ── 1 byte + the kept end (SCM_RIGHTS) ──>
//     closes the connection and forgets the token
//
// From then on the executable uses the descriptor exactly as a direct child
// uses fd 3: control messages (control.h), the client's socket passed with
// CTL_HANDOFF. Messages ninfd sent before the claim wait in the channel.
// PATH lives in a directory only ninfd's user may enter, and each token
// (128 random bits) is good for one claim.
//
// When rank 0 may run on another host (ninfd's `launch_address` setting,
// docs/cluster.md), NINF_LAUNCH_ADDRESS=HOST:PORT replaces the socket path
// and the claim goes over TCP. Rank 0 first listens on a port of its own,
// on the address its connection to ninfd leaves from, for the clients
// ninfd will redirect to it:
//
//                         <── connect(HOST:PORT) (TCP)
//                         <── "ID PORT\n"  (the token's id, rank 0's listening port)
//     ── "+" ──>
//                         <══ TLS 1.3 handshake keyed by the token ══>
//     the connection stays open: it is the control channel from now on,
//     inside that TLS session, relayed by ninfd to the Process's socketpair
//     (server/control_relay.h) and by a thread of rank 0's to its own
//     (protocol/control_bridge.h)
//
// The token itself never crosses the network: the line carries its id
// (LaunchId), which says which launch is claiming and is worth nothing to
// whoever reads it, and the session's key is derived from the token
// (LaunchKey), so only the process ninfd started, or its launcher, can
// finish the handshake. Everything on the channel after "+" is encrypted
// and authenticated: the calls' routing, the redirect tokens and the keys
// of the redirected clients' sessions.
//
// A redirected client (FRAME_REDIRECT) connects to rank 0's port and, when
// ninfd's REDIRECT carried a key (the client's connection to ninfd was TLS),
// runs a TLS 1.3 handshake keyed by it before anything else; its
// FRAME_CLAIM then comes inside that session.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "protocol/protocol_export.h"
#include "protocol/status.h"
#include "protocol/tls.h"

namespace ninf {

inline constexpr const char *kLaunchSocketEnv = "NINF_LAUNCH_SOCKET";
inline constexpr const char *kLaunchTokenEnv = "NINF_LAUNCH_TOKEN";
inline constexpr const char *kLaunchAddressEnv = "NINF_LAUNCH_ADDRESS";
// Set to 1 by a ninfd with tls_cert: its executables prepare OpenSSL
// (tls::WarmUp) while they wait for their first call, so that the
// hand-over handshake of that call does not pay for OpenSSL's start-up.
inline constexpr const char *kExecutableTlsEnv = "NINF_EXECUTABLE_TLS";
// Hex digits of a launch token.
inline constexpr std::size_t kLaunchTokenChars = 32;

// The executable's side: connects to `socket_path`, presents `token` and
// returns the control channel's descriptor in *fd (close-on-exec).
// Errors: NINF_ERR_COMMUNICATION when ninfd cannot be reached, refuses the
// token or sends no descriptor within `timeout_ms`.
NINF_PROTOCOL_API Status ClaimControlChannel(const std::string &socket_path,
                                             const std::string &token, int timeout_ms, int *fd);

// The same over TCP to `address` ("host:port"), inside TLS: *fd is the
// executable's end of the control channel (a socketpair whose other end a
// thread joins to the session: control_bridge.h), *listen_fd the socket
// clients are redirected to (listening, close-on-exec). Same errors, and
// NINF_ERR_COMMUNICATION when the TLS handshake with ninfd fails.
NINF_PROTOCOL_API Status ClaimControlChannelTcp(const std::string &address,
                                                const std::string &token, int timeout_ms, int *fd,
                                                int *listen_fd);

// What the claim over TCP says in place of the token (kLaunchTokenChars
// hex digits), and the key of the channel's TLS session: both derived from
// the token by SHA-256, each with a label of its own.
NINF_PROTOCOL_API std::string LaunchId(const std::string &token);
NINF_PROTOCOL_API tls::Psk LaunchKey(const std::string &token);

// Takes the connection of a redirected client from `listen_fd`: the first
// one whose FRAME_CLAIM carries `token` within `timeout_ms` (others are
// closed: a client that gave up on an earlier call, or a stranger). With
// `psk`, each connection must first finish a TLS handshake keyed by it, the
// claim is read inside the session, and *ssl gets the session.
// Errors: NINF_ERR_TIMEOUT when no such client came.
NINF_PROTOCOL_API Status AcceptRedirected(int listen_fd, const uint8_t *token,
                                          std::size_t token_size, int timeout_ms, int *client_fd,
                                          const tls::Psk *psk = nullptr,
                                          tls::SslPtr *ssl = nullptr);

}  // namespace ninf
