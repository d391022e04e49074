// The executable's side of a control channel that crosses hosts (launch.h,
// `launch_address`): the TCP connection to ninfd carries TLS, and the
// executable keeps using a control descriptor exactly as a direct child
// uses fd 3. A thread of its own joins the two:
//
//   executable code ── SOCK_SEQPACKET socketpair ── bridge thread ── TLS/TCP ── ninfd
//
// One ControlMsg per packet on the socketpair, the same messages back to
// back inside TLS on the stream. Descriptors cannot cross hosts: one the
// executable attaches is closed, its message goes on without it (nothing
// attaches one on this channel: call_plan.h refuses what would). Either
// side ending ends the other: the executable sees its channel close when
// ninfd's connection ends, and ninfd sees the stream end when the
// executable exits or closes the channel.
#pragma once

#include "protocol/protocol_export.h"
#include "protocol/status.h"
#include "protocol/tls.h"

namespace ninf {

// Starts the bridge over `tcp` (a connected socket, taken over) and its
// running session `ssl`; *control is the executable's end (close-on-exec).
// Errors: NINF_ERR_INTERNAL (no socketpair or thread); `tcp` is closed then.
NINF_PROTOCOL_API Status StartControlBridge(int tcp, tls::SslPtr ssl, int *control);

}  // namespace ninf
