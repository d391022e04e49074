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
//                         <── "HEX PORT\n"  (token, rank 0's listening port)
//     ── "+" ──>
//     the connection stays open: it is the control channel from now on,
//     relayed by ninfd to the Process's socketpair (server/control_relay.h)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "protocol/protocol_export.h"
#include "protocol/status.h"

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

// The same over TCP to `address` ("host:port"): *fd is the control channel
// (a blocking TCP connection), *listen_fd the socket clients are redirected
// to (listening, close-on-exec). Same errors.
NINF_PROTOCOL_API Status ClaimControlChannelTcp(const std::string &address,
                                                const std::string &token, int timeout_ms, int *fd,
                                                int *listen_fd);

// Takes the connection of a redirected client from `listen_fd`: the first
// one whose FRAME_CLAIM carries `token` within `timeout_ms` (others are
// closed: a client that gave up on an earlier call, or a stranger).
// Errors: NINF_ERR_TIMEOUT when no such client came.
NINF_PROTOCOL_API Status AcceptRedirected(int listen_fd, const uint8_t *token,
                                          std::size_t token_size, int timeout_ms, int *client_fd);

}  // namespace ninf
