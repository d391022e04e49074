// The executable's side of kept data (docs/transactions.md):
//   FetchKept     reads an array that a ninfd keeps (a transaction block's
//                 intermediate, perhaps on another server) straight into the
//                 call's buffer: the ninfd proves itself first (with keys,
//                 the caller's key; without, it answers a PROBE), then
//                 FETCH with the entry's token, DATA back;
//   KeepOnServer  hands bytes to this executable's ninfd to keep (CTL_KEEP
//                 with a memfd) and, for an array, waits for CTL_KEPT;
//   FrameToMemfd  writes a whole frame (header, message, payload) into a
//                 memfd: a two-phase call's result, as it would have been sent.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <span>
#include <string>

#include "ninf.pb.h"
#include "protocol/control.h"
#include "protocol/frame.h"
#include "protocol/status.h"

namespace ninf::stub {

// Who fetches: the call's control channel to its ninfd and, when the
// call's client proved a key (HANDOFF flag kHandoffKeyed), that key's id.
struct FetchAuth {
  int control_fd = -1;
  uint64_t call_id = 0;
  std::string key_id;  // "": the call has no key (a daemon without keys)
};

// `ref.address` is "ip:port" (numeric: executables resolve no names) or
// "unix:/path". It is dialled only if ninfd agrees (CTL_FETCH_ASK: itself,
// a server its metaserver lists, or one of its fetch_from setting; else
// NINF_ERR_AUTH naming fetch_from). Before anything of the call is sent, the listener there
// must prove that it is a ninfd the caller may name: with a key, by the
// authentication exchange with the caller's key (ninfd checks the proof
// and makes the executable's: control.h CTL_PROVE), so the FETCH then runs
// as the caller; without, by answering a PROBE as a ninfd does. Errors name
// the address: NINF_ERR_CONNECT (the keeping server is gone: the data is
// lost with it), NINF_ERR_AUTH or NINF_ERR_PROTOCOL (not a ninfd the
// caller may name), the server's refusal (NINF_ERR_INVALID_ID,
// NINF_ERR_EXPIRED, NINF_ERR_AUTH), NINF_ERR_PROTOCOL on a size other
// than ref.bytes.
Status FetchKept(const wire::DataRef &ref, const FetchAuth &auth, void *into);

// A memfd holding one frame; *bytes is its size. Errors: NINF_ERR_NO_MEMORY.
Status FrameToMemfd(FrameType type, const google::protobuf::MessageLite &msg,
                    std::span<const iovec> payload, int *fd, uint64_t *bytes);

// A memfd holding `bytes` bytes from `data`.
Status BytesToMemfd(const void *data, uint64_t bytes, int *fd);

// Sends CTL_KEEP for `param` (or kKeepWholeResult) with the memfd `fd`
// (closed here). For an array, waits for CTL_KEPT and returns the entry in
// *id and *token. Errors: ninfd's refusal (NINF_ERR_LIMIT: the store is
// full), NINF_ERR_SERVER when ninfd is gone.
Status KeepOnServer(int control_fd, uint64_t call_id, uint32_t param, int fd, uint64_t bytes,
                    uint64_t *id, std::string *token);

}  // namespace ninf::stub
