// ninfd's request path without sockets: the bytes a client sends, cut into
// reads of sizes taken from the input, through daemon::RequestReader with ninfd's rules
// (Space/Commit/complete/Reset), then each complete frame's body parsed as
// Server::OnRequest does, and the replies built from what the client sent
// checked to be decodable by a client.
//
// Input: byte 0 chooses how the stream is cut into reads (a seed), the rest
// is the stream. After an error the reader is Reset() and fed the rest, so
// that every state is also reached from a failed one.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "daemon/log.h"
#include "daemon/request_reader.h"
#include "fuzz/fuzz_check.h"
#include "ninf.pb.h"
#include "protocol/auth.h"
#include "protocol/frame.h"
#include "protocol/status.h"
#include "server/registry.h"
#include "server/server.h"

namespace {

using ninf::Status;
using ninf::daemon::RequestReader;

// Read sizes: a small xorshift generator seeded from the input, so that the
// same input always cuts the same way.
class Cutter {
 public:
  explicit Cutter(uint8_t seed) : state_(0x9e3779b97f4a7c15ull ^ seed), mode_(seed & 3) {}

  std::size_t Next(std::size_t space) {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    switch (mode_) {
      case 0:  // whatever fits: the common case of a fast client
        return space;
      case 1:  // one byte at a time: the slowest client
        return 1;
      default:  // anything in between
        return 1 + state_ % space;
    }
  }

 private:
  uint64_t state_;
  int mode_;
};

// A reply ninfd builds from the client's text must parse on the client.
void CheckReplyParses(const Status &st) {
  std::string frame;
  ninf::AppendErrorFrame(&frame, st);
  ninf::wire::Error err;
  FUZZ_CHECK(err.ParseFromArray(frame.data() + ninf::kFrameHeaderSize,
                                static_cast<int>(frame.size() - ninf::kFrameHeaderSize)),
             "ninfd's error reply does not parse on the client (invalid UTF-8 in the message?)");
  FUZZ_CHECK(err.code() == st.code(), "error code changed on the way");
}

void CheckQuoted(std::string_view value) {
  std::string q = ninf::daemon::Quoted(value);
  for (char c : q)
    FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f,
               "a control character reached a log line");
}

// What Server::OnRequest does with a complete frame (server_requests.cc,
// scheduler.cc), up to the point where it needs the registry.
void Dispatch(const ninf::FrameHeader &h, std::string_view body) {
  const int size = static_cast<int>(body.size());
  switch (h.type) {
    case ninf::FRAME_QUERY_INTERFACE: {
      ninf::wire::QueryInterface query;
      if (!query.ParseFromArray(body.data(), size)) return;
      (void)ninf::server::IsValidFunctionName(query.name());
      CheckQuoted(query.name());
      // Server::HandleQuery's reply for an unknown function.
      CheckReplyParses(
          Status(NINF_ERR_FUNCTION_NOT_FOUND, "no function '" + query.name() + "' on this server"));
      return;
    }
    case ninf::FRAME_CALL: {
      ninf::wire::CallRequest req;
      if (!req.ParseFromArray(body.data(), size)) return;
      (void)ninf::server::IsValidFunctionName(req.name());
      CheckQuoted(req.name());
      // Server::HandleCall's reply for an unknown function.
      CheckReplyParses(
          Status(NINF_ERR_FUNCTION_NOT_FOUND,
                 "no function " + ninf::daemon::Quoted(req.name()) + " on this server"));
      return;
    }
    case ninf::FRAME_STATS: {
      ninf::wire::StatsRequest req;
      (void)req.ParseFromArray(body.data(), size);
      return;
    }
    case ninf::FRAME_LIST: {
      ninf::wire::ListRequest req;
      (void)req.ParseFromArray(body.data(), size);
      return;
    }
    case ninf::FRAME_AUTH: {
      // Server::HandleAuth: the nonce must be exactly kNonceSize bytes.
      ninf::wire::AuthRequest req;
      if (!req.ParseFromArray(body.data(), size)) return;
      ninf::auth::Nonce nonce{};
      bool ok = ninf::auth::ToNonce(req.client_nonce(), &nonce);
      FUZZ_CHECK(ok == (req.client_nonce().size() == ninf::auth::kNonceSize), "nonce size");
      return;
    }
    case ninf::FRAME_PROOF: {
      // A random proof never matches (constant-time compare of any length).
      ninf::wire::AuthProof proof;
      if (!proof.ParseFromArray(body.data(), size)) return;
      ninf::auth::Proof expected{};
      expected.fill(0x5a);
      FUZZ_CHECK(!ninf::auth::ProofMatches(expected, proof.client_proof()) ||
                     proof.client_proof() == std::string(ninf::auth::kProofSize, '\x5a'),
                 "a proof matched that differs from the expected one");
      return;
    }
    case ninf::FRAME_PROBE: {
      // Server::OnRequest answers with an empty PROBE_REPLY: the payload was
      // read and dropped, the timing is the client's measurement.
      ninf::wire::Probe probe;
      (void)probe.ParseFromArray(body.data(), size);
      return;
    }
    case ninf::FRAME_COLLECT:
    case ninf::FRAME_RELEASE:
    case ninf::FRAME_FETCH: {
      // Kept data (kept_data_service.cc): an id and a token, looked up in the
      // store; any bytes must parse or be refused, never crash.
      ninf::wire::StoreKey key;
      (void)key.ParseFromArray(body.data(), size);
      return;
    }
    default:
      FUZZ_CHECK(false, "the reader let a frame through that is not a request");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  ninf::fuzz::QuietProtobuf();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
  if (size < 1) return 0;
  Cutter cut(data[0]);
  const uint8_t *stream = data + 1;
  const std::size_t total = size - 1;

  RequestReader reader(ninf::server::NinfdRequestRules());
  std::size_t pos = 0;
  std::size_t frame_bytes = 0;  // committed since the frame began
  while (pos < total) {
    FUZZ_CHECK(!reader.complete(), "complete frame left unhandled");
    std::span<uint8_t> space = reader.Space();
    FUZZ_CHECK(!space.empty(), "an incomplete frame wants no bytes");
    FUZZ_CHECK(space.size() <= 64 * 1024 + ninf::kFrameHeaderSize, "oversized read");
    std::size_t n = cut.Next(space.size());
    if (n > total - pos) n = total - pos;
    std::memcpy(space.data(), stream + pos, n);
    pos += n;
    frame_bytes += n;
    Status st = reader.Commit(n);
    if (!st.ok()) {
      FUZZ_CHECK(ninf::ErrorText(st.code()) != nullptr, st.message().c_str());
      CheckReplyParses(st);  // ninfd sends this Status to the client
      reader.Reset();
      frame_bytes = 0;
      continue;
    }
    FUZZ_CHECK(reader.partial() == !reader.complete(), "partial() disagrees");
    if (!reader.complete()) continue;

    // Never a byte past the frame: the rest belongs to the executable.
    const ninf::FrameHeader &h = reader.header();
    // A probe's payload is read (and dropped) too; no other request has one.
    FUZZ_CHECK(frame_bytes == ninf::kFrameHeaderSize + h.header_length + h.payload_length,
               "read past the frame");
    FUZZ_CHECK(reader.body().size() == h.header_length, "body size");
    FUZZ_CHECK(h.payload_length == 0 ||
                   (h.type == ninf::FRAME_PROBE && h.payload_length <= ninf::kMaxProbePayload),
               "a request with a payload was accepted");
    FUZZ_CHECK(h.header_length <= ninf::server::kMaxRequestHeader, "oversized request accepted");
    FUZZ_CHECK(ninf::server::NinfdRequestRules().Find(h.type) != nullptr, "not a request type");
    FUZZ_CHECK(reader.Space().empty(), "a complete frame wants more bytes");
    FUZZ_CHECK(reader.Commit(0).ok(), "Commit(0) on a complete frame failed");
    Dispatch(h, reader.body());
    reader.Reset();
    FUZZ_CHECK(!reader.partial() && !reader.complete(), "Reset() left state behind");
    frame_bytes = 0;
  }
  return 0;
}
