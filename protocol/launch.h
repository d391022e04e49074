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
#pragma once

#include <cstddef>
#include <string>

#include "protocol_export.h"
#include "status.h"

namespace ninf {

inline constexpr const char *kLaunchSocketEnv = "NINF_LAUNCH_SOCKET";
inline constexpr const char *kLaunchTokenEnv = "NINF_LAUNCH_TOKEN";
// Hex digits of a launch token.
inline constexpr std::size_t kLaunchTokenChars = 32;

// The executable's side: connects to `socket_path`, presents `token` and
// returns the control channel's descriptor in *fd (close-on-exec).
// Errors: NINF_ERR_COMMUNICATION when ninfd cannot be reached, refuses the
// token or sends no descriptor within `timeout_ms`.
NINF_PROTOCOL_API Status ClaimControlChannel(const std::string &socket_path,
                                             const std::string &token, int timeout_ms, int *fd);

}  // namespace ninf
