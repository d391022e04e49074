// The frame codec as every blocking peer uses it (client library, stub
// runtime): DecodeFrameHeader on the first 24 bytes, then the whole input as
// a byte stream through Channel::RecvReply (heartbeat skipping, FRAME_ERROR
// to Status, the protobuf header of the expected frame), and the error frame
// builder round-tripped.
//
// Input: byte 0 selects the expected reply type and payload bound, the rest
// is what the peer sent.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "fuzz/fuzz_check.h"
#include "ninf.pb.h"
#include "protocol/frame.h"
#include "protocol/status.h"
#include "protocol/wire.h"

namespace {

using ninf::FrameHeader;
using ninf::Status;

// A socket buffer holds this much without blocking the writer.
constexpr std::size_t kMaxStream = 64 * 1024;

std::unique_ptr<google::protobuf::MessageLite> MessageFor(uint16_t type) {
  namespace w = ninf::wire;
  switch (type) {
    case ninf::FRAME_QUERY_INTERFACE:
      return std::make_unique<w::QueryInterface>();
    case ninf::FRAME_INTERFACE:
      return std::make_unique<w::InterfaceReply>();
    case ninf::FRAME_CALL:
      return std::make_unique<w::CallRequest>();
    case ninf::FRAME_ARGS:
      return std::make_unique<w::Args>();
    case ninf::FRAME_RESULT:
      return std::make_unique<w::Result>();
    case ninf::FRAME_ERROR:
      return std::make_unique<w::Error>();
    case ninf::FRAME_STATS:
      return std::make_unique<w::StatsRequest>();
    case ninf::FRAME_STATS_REPLY:
      return std::make_unique<w::StatsReply>();
    case ninf::FRAME_LIST:
      return std::make_unique<w::ListRequest>();
    case ninf::FRAME_LIST_REPLY:
      return std::make_unique<w::ListReply>();
    case ninf::FRAME_END:
      return std::make_unique<w::End>();
    case ninf::FRAME_HEARTBEAT:
      return std::make_unique<w::Heartbeat>();
    case ninf::FRAME_AUTH:
      return std::make_unique<w::AuthRequest>();
    case ninf::FRAME_CHALLENGE:
      return std::make_unique<w::Challenge>();
    case ninf::FRAME_PROOF:
      return std::make_unique<w::AuthProof>();
    default:
      return std::make_unique<w::Heartbeat>();
  }
}

void CheckStatus(const Status &st) {
  // Every code a peer can make us return is one of the list.
  FUZZ_CHECK(ninf::ErrorText(st.code()) != nullptr, st.message().c_str());
  (void)st.ToString();
}

void FuzzHeader(const uint8_t *in) {
  for (uint64_t max_payload : {uint64_t{0}, uint64_t{1} << 20, UINT64_MAX}) {
    FrameHeader h;
    Status st = ninf::DecodeFrameHeader(in, max_payload, &h);
    CheckStatus(st);
    if (!st.ok() && st.code() != NINF_ERR_TOO_LARGE) continue;
    FUZZ_CHECK(h.type > 0 && h.type < ninf::FRAME_TYPE_LIMIT_, "decoded an unknown type");
    FUZZ_CHECK(h.header_length <= ninf::kMaxHeaderLength, "header over the limit");
    FUZZ_CHECK(std::strcmp(ninf::FrameTypeName(h.type), "UNKNOWN") != 0, "type has no name");
    if (st.ok()) FUZZ_CHECK(h.payload_length <= max_payload, "payload over the bound");
    // Encoding what was decoded gives the same bytes, except the byte-order
    // flag, which a frame without payload may carry either way.
    uint8_t again[ninf::kFrameHeaderSize];
    ninf::EncodeFrameHeader(h, again);
    again[5] = static_cast<uint8_t>((again[5] & ~ninf::kFlagLittleEndian) |
                                    (in[5] & ninf::kFlagLittleEndian));
    FUZZ_CHECK(std::memcmp(again, in, ninf::kFrameHeaderSize) == 0, "re-encoding differs");
  }
}

// What a peer receives when it waits for a reply of type `expected`.
void FuzzStream(uint16_t expected, uint64_t max_payload, const uint8_t *data, std::size_t size) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return;
  std::size_t sent = 0;
  while (sent < size) {
    ssize_t n = ::send(sv[1], data + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  ::close(sv[1]);  // the peer is done: reading past its bytes ends, never blocks
  ninf::Channel ch(sv[0]);
  auto msg = MessageFor(expected);
  FrameHeader h;
  Status st = ch.RecvReply(static_cast<ninf::FrameType>(expected), max_payload, msg.get(), &h);
  CheckStatus(st);
  FUZZ_CHECK(ch.bytes_received() <= sent, "read more than was sent");
  if (st.ok()) FUZZ_CHECK(h.type == expected, "a reply of another type was accepted");
}

// The one builder of error frames, decoded as a peer would.
void FuzzErrorRoundTrip(ninf_error_t code, const std::string &message) {
  std::string frame;
  ninf::AppendErrorFrame(&frame, Status(code, message));
  FUZZ_CHECK(frame.size() >= ninf::kFrameHeaderSize, "short error frame");
  FrameHeader h;
  Status st = ninf::DecodeFrameHeader(reinterpret_cast<const uint8_t *>(frame.data()), 0, &h);
  FUZZ_CHECK(st.ok(), st.message().c_str());
  FUZZ_CHECK(h.type == ninf::FRAME_ERROR, "not an error frame");
  FUZZ_CHECK(h.header_length == frame.size() - ninf::kFrameHeaderSize, "header length");
  ninf::wire::Error err;
  FUZZ_CHECK(
      err.ParseFromArray(frame.data() + ninf::kFrameHeaderSize, static_cast<int>(h.header_length)),
      "own error frame does not parse");
  FUZZ_CHECK(err.code() == code && err.message() == message, "error frame round trip");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  ninf::fuzz::QuietProtobuf();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
  if (size < 1) return 0;
  const uint8_t selector = data[0];
  const uint8_t *stream = data + 1;
  const std::size_t stream_size = size - 1 < kMaxStream ? size - 1 : kMaxStream;

  if (stream_size >= ninf::kFrameHeaderSize) FuzzHeader(stream);

  uint16_t expected = static_cast<uint16_t>(1 + selector % (ninf::FRAME_TYPE_LIMIT_ - 1));
  uint64_t max_payload = (selector & 0x80) ? UINT64_MAX : uint64_t{1} << 16;
  FuzzStream(expected, max_payload, stream, stream_size);

  // Messages are ASCII here: a proto3 string must be UTF-8, and a peer
  // refuses an Error whose message is not (the builder does not check).
  int32_t code = 0;
  if (stream_size >= 4) std::memcpy(&code, stream, 4);
  std::string message(reinterpret_cast<const char *>(stream), stream_size > 64 ? 64 : stream_size);
  for (char &c : message) c = static_cast<char>(c & 0x7f);
  FuzzErrorRoundTrip(ninf::ErrorFromWire(code), message);  // what a Status can hold
  return 0;
}
