// Frame header: the fixed 24 bytes in front of every message.
//
//   0               4       5       6               8
//   +---------------+-------+-------+---------------+
//   | magic "NINF"  |version| flags |  frame type   |
//   +---------------+-------+-------+---------------+
//   8                               12              16
//   +-------------------------------+---------------+
//   | header length (u32)           | reserved = 0  |
//   +-------------------------------+---------------+
//   16                                              24
//   +-----------------------------------------------+
//   | payload length (u64)                          |
//   +-----------------------------------------------+
//   then `header length` bytes of protobuf (ninf.proto),
//   then `payload length` bytes of raw array data.
//
// Multi-byte header fields are little-endian. Flag bit 0 says the payload's
// numbers are little-endian; a receiver of the other byte order refuses it.
#pragma once

#include <google/protobuf/message_lite.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "protocol/protocol_export.h"
#include "protocol/status.h"

namespace ninf {

inline constexpr std::size_t kFrameHeaderSize = 24;
inline constexpr uint8_t kMagic[4] = {'N', 'I', 'N', 'F'};
inline constexpr uint8_t kProtocolVersion = 1;
inline constexpr uint8_t kFlagLittleEndian = 0x01;

// Largest protobuf header any peer accepts. Interfaces and argument lists are
// small; anything bigger is a broken or hostile peer.
inline constexpr uint32_t kMaxHeaderLength = 1u << 20;

// Largest payload of a FRAME_PROBE (the large probe is 1 MiB by default).
inline constexpr uint64_t kMaxProbePayload = uint64_t{16} << 20;

// The one list of frame types: value, name, direction and protobuf message.
// FrameType and FrameTypeName() are generated from it; values are stable on
// the wire (never renumber, only append).
#define NINF_FRAME_MAP(X)                                                \
  X(FRAME_QUERY_INTERFACE, 1) /* client -> ninfd      QueryInterface */  \
  X(FRAME_INTERFACE, 2)       /* ninfd -> client      InterfaceReply */  \
  X(FRAME_CALL, 3)            /* client -> ninfd      CallRequest */     \
  X(FRAME_ARGS, 4)            /* client -> executable Args + arrays */   \
  X(FRAME_RESULT, 5)          /* executable -> client Result + arrays */ \
  X(FRAME_ERROR, 6)           /* any direction        Error */           \
  X(FRAME_STATS, 7)           /* client -> ninfd      StatsRequest */    \
  X(FRAME_STATS_REPLY, 8)     /* ninfd -> client      StatsReply */      \
  X(FRAME_LIST, 9)            /* client -> ninfd      ListRequest */     \
  X(FRAME_LIST_REPLY, 10)     /* ninfd -> client      ListReply */       \
  X(FRAME_END, 11)            /* client -> executable End */             \
  X(FRAME_HEARTBEAT, 12)      /* ninfd/executable -> client Heartbeat */ \
  X(FRAME_AUTH, 13)           /* client -> ninfd      AuthRequest */     \
  X(FRAME_CHALLENGE, 14)      /* ninfd -> client      Challenge */       \
  X(FRAME_PROOF, 15)          /* client -> ninfd      AuthProof */       \
  X(FRAME_PROBE, 16)          /* client -> ninfd      Probe + bytes */   \
  X(FRAME_PROBE_REPLY, 17)    /* ninfd -> client      ProbeReply */      \
  X(FRAME_META_REGISTER, 18)  /* ninfd -> meta   ServerRegistration */   \
  X(FRAME_META_LOAD, 19)      /* ninfd -> meta        LoadReport */      \
  X(FRAME_META_ACK, 20)       /* meta -> ninfd/client MetaAck */         \
  X(FRAME_META_PLACE, 21)     /* client -> meta       PlaceRequest */    \
  X(FRAME_META_PLACEMENT, 22) /* meta -> client       Placement */       \
  X(FRAME_META_OUTCOME, 23)   /* client -> meta       CallOutcome */     \
  X(FRAME_META_PROBED, 24)    /* client -> meta       ProbeOutcome */    \
  X(FRAME_SUBMITTED, 25)      /* executable -> client Submitted */       \
  X(FRAME_COLLECT, 26)        /* client -> ninfd      StoreKey */        \
  X(FRAME_RELEASE, 27)        /* client -> ninfd      StoreKey */        \
  X(FRAME_RELEASED, 28)       /* ninfd -> client      Released */        \
  X(FRAME_FETCH, 29)          /* executable -> ninfd  StoreKey */        \
  X(FRAME_DATA, 30)           /* ninfd -> executable  Data + bytes */    \
  X(FRAME_REDIRECT, 31)       /* ninfd -> client      Redirect */        \
  X(FRAME_CLAIM, 32)          /* client -> executable Claim */           \
  X(FRAME_HANDOVER, 33)       /* ninfd -> client      Handover */        \
  X(FRAME_RELAY_REGISTER, 40) /* ninfd -> relay       RelayRegister */   \
  X(FRAME_RELAY_DIAL, 41)     /* relay -> ninfd       RelayDial */       \
  X(FRAME_RELAY_DATA, 42)     /* ninfd -> relay       RelayData */       \
  X(FRAME_RELAY_OPEN, 43)     /* client -> relay      RelayOpen */       \
  X(FRAME_RELAY_ACK, 44)      /* relay -> ninfd       RelayAck */

enum FrameType : uint16_t {
#define NINF_FRAME_ENUM_(name, value) name = value,
  NINF_FRAME_MAP(NINF_FRAME_ENUM_)
#undef NINF_FRAME_ENUM_
      FRAME_TYPE_LIMIT_  // first unused value
};

// Whether the bytes after a frame of this type belong to someone other than
// the daemon that read it: after FRAME_CALL, to the executable; after
// FRAME_RELAY_OPEN and FRAME_RELAY_DATA, to the other end of a relay's
// bridge (docs/relay.md). A daemon's reader stops right behind such a frame.
constexpr bool HandsOverStream(uint16_t type) {
  return type == FRAME_CALL || type == FRAME_RELAY_OPEN || type == FRAME_RELAY_DATA;
}

struct FrameHeader {
  uint16_t type = 0;
  uint8_t flags = 0;
  uint32_t header_length = 0;
  uint64_t payload_length = 0;
};

// "CALL", "RESULT", ...; "UNKNOWN" for a value outside the list.
NINF_PROTOCOL_API const char *FrameTypeName(uint16_t type);

// Writes the 24-byte encoding of `h` (with magic, version and this host's
// byte-order flag) into `out`.
NINF_PROTOCOL_API void EncodeFrameHeader(const FrameHeader &h, uint8_t out[kFrameHeaderSize]);

// Decodes and validates 24 bytes: magic, version, type, reserved field,
// header length and byte order. `max_payload` bounds payload_length.
// Errors: NINF_ERR_PROTOCOL (bad magic, type, lengths), NINF_ERR_VERSION,
// NINF_ERR_TOO_LARGE (payload over max_payload), NINF_ERR_NOT_SUPPORTED
// (foreign byte order). On NINF_ERR_TOO_LARGE *out is filled in all the same,
// so that the caller knows how much payload to read away.
NINF_PROTOCOL_API Status DecodeFrameHeader(const uint8_t in[kFrameHeaderSize], uint64_t max_payload,
                                           FrameHeader *out);

// Appends one frame (header, protobuf header `msg`) to `out`: how the
// event-driven ninfd queues its replies. `msg` may be null for an empty
// header. With payload_length > 0 the caller appends (or writes) that many
// payload bytes after it.
NINF_PROTOCOL_API void AppendFrame(std::string *out, FrameType type,
                                   const google::protobuf::MessageLite *msg,
                                   uint64_t payload_length = 0);

namespace wire {
class Error;
}

// Fills the FRAME_ERROR message for `st`: the one builder of error frames,
// used by AppendErrorFrame (ninfd) and Channel::SendError (blocking peers).
NINF_PROTOCOL_API void EncodeError(const Status &st, wire::Error *out);

// Appends a FRAME_ERROR carrying `st`'s code and message.
NINF_PROTOCOL_API void AppendErrorFrame(std::string *out, const Status &st);

}  // namespace ninf
