// Incremental reader of the frames a client sends to a daemon.
//
// The daemon must never read past the frame it is working on: a client
// pipelines its FRAME_ARGS (and the arrays) right behind FRAME_CALL, and
// those bytes belong to the executable that ninfd hands the connection to.
// So the reader says how many bytes it wants (never more than what is left
// of the current frame), the caller reads at most that many into Space(),
// and Commit() validates the 24-byte header as soon as it is complete.
//
// Requests carry no payload (but for ninfd's FRAME_PROBE, whose bytes are
// read and dropped), and their protobuf header is small, so a frame with a
// payload or a header over the row's limit is a protocol error. Which frames
// a daemon accepts, and how large, are its RequestRules, derived from its
// frame table (frame_table.h: ninfd's requests are a name at most, ninf-meta
// takes server registrations, which carry interfaces). Pure logic, no
// sockets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/frame.h"
#include "protocol/status.h"

namespace ninf::daemon {

// What a daemon accepts, derived from its frame table (frame_table.h).
struct RequestRules {
  struct Frame {
    uint16_t type;
    uint32_t max_header;   // largest protobuf header
    uint64_t max_payload;  // bytes after the header, read and dropped; 0: none
    // FrameRoute::unkeyed_refusal (frame_table.h); null: the client's wording.
    const char *unkeyed_refusal = nullptr;
  };
  const char *daemon;  // "ninfd", for the messages
  std::vector<Frame> frames;
  // On a TLS listener, a client whose first bytes are a plaintext frame is
  // served in plaintext rather than told that TLS is required: ninf-relay,
  // whose clients and dial-backs carry their own TLS end to end through it
  // (its control connections alone speak TLS with it).
  bool plaintext_beside_tls = false;

  // The row of `type`, or null when the daemon does not accept it.
  const Frame *Find(uint16_t type) const;
};

class RequestReader {
 public:
  // `rules` outlives the reader.
  explicit RequestReader(const RequestRules &rules) : rules_(&rules) {}
  const RequestRules &rules() const { return *rules_; }

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
