// The control channel between ninfd and an executable it started: a
// SOCK_SEQPACKET socketpair whose executable end is the executable's fd 3.
//
// ninfd never touches array data. It hands the client's connected socket to
// the executable (CTL_HANDOFF, the socket attached with SCM_RIGHTS) and the
// executable then speaks the wire protocol with the client directly. Over
// this channel the executable reports what happened, so ninfd can keep
// statistics, free job slots and tell a cancelled call from a finished one:
//
//   ninfd                          executable
//     |--- CTL_HANDOFF (+ fd) ------->|   call id, limits, persistent flag
//     |<-- CTL_ARGS_RECEIVED ---------|   arguments in, computing
//     |<-- CTL_REPLYING --------------|   about to send the result
//     |<-- CTL_CALL_DONE -------------|   outcome, byte counts, timings
//
// A persistent executable's first CTL_CALL_DONE carries a memfd page (over
// a Unix-domain channel): the page its handle's later calls may find their
// slot kept in between calls, and then begin without a message until
// CALL_DONE (slot_lease.h).
//
// A persistent executable (function handles) serves further calls on the
// same connection. Each of them takes a job slot like any other call: the
// executable asks before it reads the arguments and waits for the answer
// (sending the client heartbeats meanwhile), then reports as above:
//
//     |<-- CTL_WANT_SLOT -------------|   the client sent its next call
//     |--- CTL_SLOT ----------------->|   granted (error_code 0) or refused
//
// Admission after arrival (HANDOFF flag kHandoffArgsFirst, ninfd's
// `admission = "arrival"`): the call holds no slot at the hand-off. The
// executable reads the arguments first, then asks for the slot with them in
// memory (WANT_SLOT carries bytes_in, recv_seconds, the result's bytes in
// bytes_out and the CalcOrder in work_flops, for the queue's order), sends
// the client heartbeats while it waits (and one on CTL_PROBE), and
// computes once CTL_SLOT grants it (with its threads). The same order holds
// for a handle's later calls:
//
//     |--- CTL_HANDOFF (+ fd) ------->|   no slot, no threads yet
//     |<-- CTL_WANT_SLOT -------------|   arguments in
//     |--- CTL_SLOT ----------------->|   granted: threads, time waited
//     |<-- CTL_ARGS_RECEIVED ---------|   computing
//     ...
//     |<-- CTL_ARRIVING --------------|   a handle's next ARGS frame has come
//     |<-- CTL_WANT_SLOT -------------|   its arguments are in
//
// A handle's later call is held to the arrival bounds as a first call is
// (server/admission.h ArrivalGate). ARRIVING carries the ARGS payload's
// length in bytes_in. When the whole frame is in the executable's socket
// already, it reads on at once (its bytes are in this host's memory, at
// most a socket buffer of them) and ninfd counts it, room or not. When
// its bytes are still coming (a large or slow upload), ARRIVING says
// kArrivingAsksRoom and the executable reads nothing until ninfd gives it
// room, sending the client heartbeats meanwhile, as it does for a slot:
//
//     |<-- CTL_ARRIVING (asks room) --|   bytes_in: the payload to come
//     |--- CTL_ROOM ----------------->|   read it (error_code 0), or refused
//     |<-- CTL_WANT_SLOT -------------|   its arguments are in
//
// A one-shot executable that ninfd allows to serve further calls (HANDOFF
// flag kHandoffReusable) does not exit after its call: it closes its copy of
// the client's socket, forgets the client (OUT and WORK buffers are cleared
// before another client's call can see them) and waits for the next
// hand-off:
//
//     |<-- CTL_RELEASED --------------|   the connection is closed; idle again
//
// Kept data (docs/transactions.md). A two-phase call's HANDOFF carries the
// store entry ninfd reserved for its result (store_id, token): the
// executable answers the client FRAME_SUBMITTED, closes the connection,
// and hands its RESULT or ERROR frame over as a memfd. A block's call that
// keeps arrays asks for an entry per array:
//
//     |<-- CTL_KEEP (+ memfd) --------|   param, bytes: keep this array
//     |--- CTL_KEPT ----------------->|   store_id + token, or error_code
//     |<-- CTL_KEEP (+ memfd) --------|   param = kKeepWholeResult: the
//                                     |   two-phase call's frame (no answer)
//
// A call whose arguments name kept data on a ninfd (Args.refs) fetches it
// there itself, server to server. With keys, that connection authenticates
// with the key the call's client proved (ninfd's HANDOFF names its id,
// flag kHandoffKeyed), but the key never leaves ninfd: the executable sends
// FRAME_AUTH, and hands the daemon's CHALLENGE to ninfd, which checks the
// daemon's proof and makes the executable's. Nothing of the call is sent to
// an address whose listener has not proved that it holds the caller's key:
//
//     |<-- CTL_FETCH_ASK -------------|   may it dial this address at all?
//     |--- CTL_FETCH_ANSWER --------->|   error_code: NINF_OK, or the refusal
//     |<-- CTL_PROVE -----------------|   client and server nonce, server proof
//     |--- CTL_PROVED --------------->|   the client proof, or error_code
//
// CTL_PROBE (ninfd -> executable, while the routine runs): the client shut
// its write side; send a heartbeat now, so that a closed client answers with
// a reset. CTL_CLIENT_GONE: a heartbeat to the client failed; ninfd kills
// the executable and frees the slot. Both ends are built from one source, so
// the message is a plain fixed-size struct.
//
// An executable on another host (ninfd's `launch_address`, launch.h) has
// its channel over TCP instead, relayed by ninfd (server/control_relay.h):
// the same messages, back to back on a byte stream inside TLS (launch.h),
// and no descriptors. Its CTL_HANDOFF carries a redirect token in place of
// the client's socket (and, when the client's connection is TLS, the key of
// the client's session with rank 0 in psk, kHandoffTls): the client is sent
// to the executable's own address with that token and key (FRAME_REDIRECT,
// inside ninfd's own session) and connects there itself.
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/protocol_export.h"
#include "protocol/status.h"

namespace ninf {

// The executable's end of the control channel.
inline constexpr int kControlFd = 3;

enum ControlKind : uint32_t {
  CTL_HANDOFF = 1,
  CTL_ARGS_RECEIVED = 2,
  CTL_REPLYING = 3,
  CTL_CALL_DONE = 4,
  CTL_WANT_SLOT = 5,
  CTL_SLOT = 6,
  CTL_CLIENT_GONE = 7,
  CTL_PROBE = 8,
  CTL_RELEASED = 9,
  CTL_KEEP = 10,
  CTL_KEPT = 11,
  CTL_PROVE = 12,
  CTL_PROVED = 13,
  // Admission after arrival: a handle's next call's ARGS frame has come;
  // its arguments are arriving (no answer: the slot is asked for once they
  // are in, with CTL_WANT_SLOT). ninfd watches their progress from here.
  CTL_ARRIVING = 14,
  // ninfd's relay to a rank 0 on another host (server/control_relay.h) ->
  // ninfd's Process, never over the wire: the HANDOFF of call_id went to
  // rank 0 with redirect_token, and rank 0 listens at redirect_host:
  // redirect_port; the Job sends the client FRAME_REDIRECT with them.
  CTL_REDIRECTED = 15,
  // Before a call's executable dials the ninfd a data reference names:
  // may it (server/fetch_policy.h)? fetch_address is the reference's
  // address; ninfd answers CTL_FETCH_ANSWER (error_code NINF_OK, or why not).
  CTL_FETCH_ASK = 16,
  CTL_FETCH_ANSWER = 17,
  // ninfd's answer to an ARRIVING that asks room (kArrivingAsksRoom): the
  // call may read its arguments now (error_code NINF_OK), or is refused
  // (NINF_ERR_SHUTTING_DOWN).
  CTL_ROOM = 18,
};

inline constexpr std::size_t kStoreTokenSize = 16;
// CTL_KEEP of a two-phase call's whole result frame, into its reserved entry.
inline constexpr uint32_t kKeepWholeResult = 0xffffffffu;

inline constexpr uint32_t kHandoffPersistent = 0x1;
// After this one-shot call, wait for another hand-off instead of exiting.
inline constexpr uint32_t kHandoffReusable = 0x2;
// The call's client authenticated with the key whose id is HANDOFF's key_id.
inline constexpr uint32_t kHandoffKeyed = 0x4;
// The client's connection is TLS: ninfd has sent it FRAME_HANDOVER with
// HANDOFF's psk, and the executable accepts the client's TLS handshake
// authenticated by that key before it reads a frame (protocol/tls.h).
inline constexpr uint32_t kHandoffTls = 0x8;
// Admission after arrival: read each call's arguments, then ask for its
// slot (CTL_WANT_SLOT) and compute once it is granted.
inline constexpr uint32_t kHandoffArgsFirst = 0x10;
// The same for a handle's later calls (each announced by CTL_ARRIVING),
// whether or not this first call's slot came with the hand-off.
inline constexpr uint32_t kHandoffLaterArgsFirst = 0x20;
// ARRIVING: the arguments are still coming; the executable waits for
// CTL_ROOM before it reads them.
inline constexpr uint32_t kArrivingAsksRoom = 0x1;
inline constexpr std::size_t kControlPskSize = 32;
// Sizes of the authentication exchange (protocol/auth.h), which the
// executables do not link.
inline constexpr std::size_t kControlKeyIdSize = 8;
inline constexpr std::size_t kControlNonceSize = 32;

struct ControlMsg {
  uint32_t kind = 0;
  int32_t error_code = 0;  // CALL_DONE: NINF_OK or the call's error; SLOT: NINF_OK = granted
  uint64_t call_id = 0;
  uint64_t max_call_bytes = 0;  // HANDOFF: per-call array limit (0 = none)
  uint32_t flags = 0;           // HANDOFF: kHandoffPersistent, ...; ARRIVING: kArrivingAsksRoom
  uint32_t threads = 0;         // HANDOFF, SLOT: threads this call may use (set per call);
                                // CALL_DONE: 1 if the routine is single-threaded, else 0
  uint32_t heartbeat_ms = 0;    // HANDOFF: send FRAME_HEARTBEAT this often while computing
  uint32_t cpu_seconds = 0;     // HANDOFF: CPU budget of each call (0 = none)
  uint64_t bytes_in = 0;        // CALL_DONE, WANT_SLOT (after arrival): bytes received;
                                // ARRIVING: the ARGS payload's length
  uint64_t bytes_out = 0;       // CALL_DONE: bytes sent to the client; KEEP: the bytes kept;
                                // WANT_SLOT (after arrival): the result's bytes still to send
  double recv_seconds = 0;      // CALL_DONE, WANT_SLOT (after arrival): time receiving arguments
  double compute_seconds = 0;   // CALL_DONE: time in the routine
  double send_seconds = 0;      // CALL_DONE: time sending results
  double work_flops = 0;        // ARGS_RECEIVED, CALL_DONE, WANT_SLOT: CalcOrder on the IN scalars
                                // (0: none)
  double queue_seconds = 0;     // HANDOFF, SLOT: how long the call waited for its slot
  uint64_t peak_rss_bytes = 0;  // CALL_DONE: the executable's resident peak over the call
                                // (0: unknown; stubs/runtime/peak_memory.h)
  uint64_t store_id = 0;        // HANDOFF (two-phase), KEPT: the store entry
  uint32_t param = 0;           // KEEP: the parameter, or kKeepWholeResult
  uint8_t token[kStoreTokenSize] = {};           // HANDOFF (two-phase), KEPT: the entry's token
  double store_seconds = 0;                      // HANDOFF (two-phase): how long the result is kept
  uint8_t redirect_token[kStoreTokenSize] = {};  // HANDOFF over TCP: the client's FRAME_CLAIM
  uint32_t redirect_wait_ms = 0;           // HANDOFF over TCP: how long the client may take to come
  char redirect_host[64] = {};             // REDIRECTED: rank 0's address (NUL-terminated)
  uint32_t redirect_port = 0;              // REDIRECTED: rank 0's port for redirected clients
  uint8_t key_id[kControlKeyIdSize] = {};  // HANDOFF (kHandoffKeyed): the caller's key id
  uint8_t client_nonce[kControlNonceSize] = {};  // PROVE
  uint8_t server_nonce[kControlNonceSize] = {};  // PROVE
  uint8_t proof[kControlNonceSize] = {};         // PROVE: the daemon's; PROVED: the executable's
  uint8_t psk[kControlPskSize] = {};             // HANDOFF (kHandoffTls): the hand-over key
  char fetch_address[128] = {};  // FETCH_ASK: the data reference's address (NUL-terminated)
};

// Sends one message; attaches `pass_fd` when it is >= 0.
// Returns 0, or -1 with errno set.
NINF_PROTOCOL_API int SendControl(int sock, const ControlMsg &msg, int pass_fd = -1);

// Receives one message and the descriptor attached to it, if any (*fd = -1
// otherwise; fd may be null when none is expected, and one that arrives
// anyway is closed). Returns 1 for a message, 0 when the peer has closed,
// -1 with errno set on error (EAGAIN on a non-blocking socket with nothing
// to read, EPROTO for a message of the wrong size). On a stream socket (the
// TCP channel) a message that arrived in part is waited for to the end.
NINF_PROTOCOL_API int RecvControl(int sock, ControlMsg *msg, int *fd);

}  // namespace ninf
