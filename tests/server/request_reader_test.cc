// Unit tests of the incremental request reader (daemon/request_reader.h):
// it must never ask for a byte past the current frame.
#include "daemon/request_reader.h"

#include <catch2/catch.hpp>
#include <cstring>

#include "ninf.pb.h"
#include "server/server.h"

using namespace ninf;

namespace {

// ninfd's reader: the rules of its frame table (server_requests.cc).
class RequestReader : public daemon::RequestReader {
 public:
  RequestReader() : daemon::RequestReader(server::NinfdRequestRules()) {}
  using daemon::RequestReader::RequestReader;
};

}  // namespace

namespace {

std::string Frame(FrameType type, const std::string &body, uint64_t payload = 0) {
  FrameHeader h;
  h.type = type;
  h.header_length = static_cast<uint32_t>(body.size());
  h.payload_length = payload;
  uint8_t fixed[kFrameHeaderSize];
  EncodeFrameHeader(h, fixed);
  return std::string(reinterpret_cast<char *>(fixed), sizeof fixed) + body;
}

// Feeds `bytes` through the reader the way the daemon does, at most `chunk`
// bytes per read and never more than Space(). Returns the bytes consumed.
std::size_t Feed(RequestReader &r, const std::string &bytes, std::size_t chunk, Status *st) {
  std::size_t pos = 0;
  while (pos < bytes.size() && !r.complete()) {
    auto space = r.Space();
    std::size_t n = std::min({space.size(), chunk, bytes.size() - pos});
    std::memcpy(space.data(), bytes.data() + pos, n);
    pos += n;
    *st = r.Commit(n);
    if (!st->ok()) break;
  }
  return pos;
}

}  // namespace

TEST_CASE("reader_stops_exactly_at_frame_end", "[reader]") {
  wire::CallRequest call;
  call.set_name("dgesv");
  call.set_call_id(7);
  std::string first = Frame(FRAME_CALL, call.SerializeAsString());
  std::string pipelined = first + "ARGS AND ARRAYS THAT BELONG TO THE EXECUTABLE";
  for (std::size_t chunk : {1u, 3u, 24u, 1000u}) {
    RequestReader r;
    Status st;
    std::size_t used = Feed(r, pipelined, chunk, &st);
    REQUIRE(st.ok());
    REQUIRE(r.complete());
    CHECK(used == first.size());  // not one byte more
    CHECK(r.Space().empty());
    CHECK(r.header().type == FRAME_CALL);
    wire::CallRequest parsed;
    REQUIRE(parsed.ParseFromString(std::string(r.body())));
    CHECK(parsed.name() == "dgesv");
  }
}

TEST_CASE("reader_empty_body_completes_after_header", "[reader]") {
  RequestReader r;
  Status st;
  CHECK(Feed(r, Frame(FRAME_STATS, "") + "next", 100, &st) == kFrameHeaderSize);
  CHECK(st.ok());
  CHECK(r.complete());
  CHECK(r.body().empty());
  r.Reset();
  CHECK_FALSE(r.complete());
  CHECK_FALSE(r.partial());
  CHECK(r.Space().size() == kFrameHeaderSize);
}

TEST_CASE("reader_reports_partial_frames", "[reader]") {
  RequestReader r;
  Status st;
  std::string f = Frame(FRAME_QUERY_INTERFACE, "\n\x05hello");
  Feed(r, f.substr(0, 10), 100, &st);
  CHECK(r.partial());
  Feed(r, f.substr(10), 100, &st);
  CHECK(r.complete());
  CHECK_FALSE(r.partial());
}

TEST_CASE("reader_rejects_bad_headers", "[reader]") {
  Status st;
  SECTION("bad magic") {
    std::string f = Frame(FRAME_LIST, "");
    f[0] = 'X';
    RequestReader r;
    Feed(r, f, 100, &st);
    CHECK(st.code() == NINF_ERR_PROTOCOL);
  }
  SECTION("wrong version") {
    std::string f = Frame(FRAME_LIST, "");
    f[4] = 9;
    RequestReader r;
    Feed(r, f, 100, &st);
    CHECK(st.code() == NINF_ERR_VERSION);
  }
  SECTION("a frame type ninfd does not accept") {
    RequestReader r;
    Feed(r, Frame(FRAME_RESULT, ""), 100, &st);
    CHECK(st.code() == NINF_ERR_PROTOCOL);
  }
  SECTION("a payload") {
    RequestReader r;
    Feed(r, Frame(FRAME_CALL, "", 8), 100, &st);
    CHECK(st.code() == NINF_ERR_PROTOCOL);
  }
  SECTION("a header over the request limit") {
    std::string f = Frame(FRAME_QUERY_INTERFACE, "");
    uint32_t big = server::kMaxRequestHeader + 1;
    for (int i = 0; i < 4; ++i) f[8 + i] = static_cast<char>(big >> (8 * i));
    RequestReader r;
    Feed(r, f, 100, &st);
    CHECK(st.code() == NINF_ERR_PROTOCOL);
  }
  SECTION("a header over the protocol limit") {
    std::string f = Frame(FRAME_QUERY_INTERFACE, "");
    for (int i = 0; i < 4; ++i) f[8 + i] = '\xff';
    RequestReader r;
    Feed(r, f, 100, &st);
    CHECK(st.code() == NINF_ERR_PROTOCOL);
  }
}

TEST_CASE("reader_body_space_grows_with_data", "[reader]") {
  // A client announcing a large header gets buffer space in 64 KiB steps,
  // not the announced size at once.
  std::string body(server::kMaxRequestHeader, 'x');
  RequestReader r;
  Status st;
  Feed(r, Frame(FRAME_QUERY_INTERFACE, body).substr(0, kFrameHeaderSize), 100, &st);
  REQUIRE(st.ok());
  CHECK(r.Space().size() <= 64 * 1024);
}

TEST_CASE("reader_drops_probe_payload_and_stops_at_its_end", "[reader]") {
  // A probe's bytes are read and dropped; what follows is the next frame.
  const uint64_t payload = 200 * 1024 + 7;
  std::string bytes =
      Frame(FRAME_PROBE, "", payload) + std::string(payload, 'x') + Frame(FRAME_STATS, "");
  RequestReader r;
  Status st;
  std::size_t used = Feed(r, bytes, 4096, &st);
  REQUIRE(st.ok());
  REQUIRE(r.complete());
  CHECK(r.header().type == FRAME_PROBE);
  CHECK(r.header().payload_length == payload);
  CHECK(used == kFrameHeaderSize + payload);

  SECTION("a probe over the limit is refused from its header") {
    RequestReader big;
    Feed(big, Frame(FRAME_PROBE, "", kMaxProbePayload + 1), 100, &st);
    CHECK(st.code() == NINF_ERR_PROTOCOL);
  }
}

// The whitelist ninfd's frame table derives is the one it always had: these
// ten request types and no other, a name-sized header, a payload for PROBE
// alone.
TEST_CASE("request_reader_ninfd_table_accepts_exactly_its_requests", "[request_reader]") {
  const daemon::RequestRules &rules = server::NinfdRequestRules();
  const FrameType accepted[] = {
      FRAME_QUERY_INTERFACE, FRAME_CALL,  FRAME_STATS,   FRAME_LIST,    FRAME_AUTH,
      FRAME_PROOF,           FRAME_PROBE, FRAME_COLLECT, FRAME_RELEASE, FRAME_FETCH};
  CHECK(rules.frames.size() == std::size(accepted));
  for (FrameType t : accepted) {
    const daemon::RequestRules::Frame *f = rules.Find(t);
    REQUIRE(f);
    CHECK(f->max_header == server::kMaxRequestHeader);
    CHECK(f->max_payload == (t == FRAME_PROBE ? kMaxProbePayload : 0));
  }
  for (uint16_t t = 0; t < 256; ++t) {
    bool listed = false;
    for (FrameType a : accepted) listed = listed || a == t;
    if (!listed) CHECK(rules.Find(t) == nullptr);
  }
}
