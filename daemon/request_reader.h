// Incremental reader of the frames a client sends to ninfd.
//
// The daemon must never read past the frame it is working on: a client
// pipelines its FRAME_ARGS (and the arrays) right behind FRAME_CALL, and
// those bytes belong to the executable that ninfd hands the connection to.
// So the reader says how many bytes it wants (never more than what is left
// of the current frame), the caller reads at most that many into Space(),
// and Commit() validates the 24-byte header as soon as it is complete.
//
// Requests carry no payload (but for FRAME_PROBE, whose bytes are read and
// dropped), and to ninfd their protobuf header is a name at most, so a frame
// with a payload or a header over the daemon's limit is a protocol error.
// Which frames a daemon accepts, and how large, are its RequestRules
// (ninf-meta takes server registrations, which carry interfaces). Pure
// logic, no sockets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "protocol/frame.h"
#include "protocol/status.h"

namespace ninf::daemon {

// Largest protobuf header of a request ninfd accepts.
inline constexpr uint32_t kMaxRequestHeader = 64 * 1024;

// Whether ninfd accepts a frame of this type from a client.
bool IsRequestType(uint16_t type);

// What a daemon accepts.
struct RequestRules {
  const char *daemon;                    // "ninfd", for the messages
  bool (*accepts)(uint16_t frame_type);  // request types
  uint32_t max_header;                   // largest protobuf header
};

// ninfd's: IsRequestType, kMaxRequestHeader.
const RequestRules &NinfdRequestRules();

class RequestReader {
 public:
  explicit RequestReader(const RequestRules &rules = NinfdRequestRules()) : rules_(&rules) {}

  // Where the next read goes: never larger than what remains of the current
  // frame (and at most 64 KiB at a time, so memory follows the bytes that
  // actually arrived). Empty once a frame is complete.
  std::span<uint8_t> Space();

  // Records that the first n bytes of Space() were filled. Validates the
  // frame header when its 24 bytes are in. Errors: the DecodeFrameHeader
  // codes, or NINF_ERR_PROTOCOL for a payload, an oversized header or a
  // frame type that is not a request. After an error the reader is unusable.
  Status Commit(std::size_t n);

  // A whole frame is in; header() and body() describe it until Reset().
  bool complete() const { return stage_ == Stage::kComplete; }
  const FrameHeader &header() const { return header_; }
  std::string_view body() const { return body_; }

  // Some bytes of a frame were received, but not all: closing now would
  // truncate it.
  bool partial() const { return stage_ != Stage::kComplete && (fixed_filled_ > 0); }

  // Gets ready for the next frame.
  void Reset();

 private:
  enum class Stage { kFixed, kBody, kDrop, kComplete };

  Status FinishFixed();
  // After the protobuf header: the probe's payload to drop, or done.
  void FinishBody();

  const RequestRules *rules_;
  Stage stage_ = Stage::kFixed;
  uint8_t fixed_[kFrameHeaderSize] = {};
  std::size_t fixed_filled_ = 0;
  FrameHeader header_;
  std::string body_;
  std::size_t body_filled_ = 0;
  uint64_t drop_left_ = 0;  // probe payload bytes still to read and drop
  std::string scratch_;     // where they go
};

}  // namespace ninf::daemon
