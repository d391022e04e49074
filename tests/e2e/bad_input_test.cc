// Bad input against the real daemon and executables. Each case is followed
// by a good call that must still succeed, and the daemon must keep no
// zombie children.
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "client/ninf.h"
#include "ninf.pb.h"
#include "protocol/frame.h"
#include "protocol/wire.h"
#include "tests/e2e/e2e_fixture.h"

using namespace ninf;

namespace {

std::unique_ptr<Channel> Connect(const E2EDaemon &d) {
  int fd = -1;
  REQUIRE(ConnectTcp("127.0.0.1", d.port(), 5000, &fd).ok());
  return std::make_unique<Channel>(fd, 10000);
}

void SendRaw(Channel &ch, const void *bytes, std::size_t n) {
  REQUIRE(::send(ch.fd(), bytes, n, MSG_NOSIGNAL) == static_cast<ssize_t>(n));
}

// The next frame must be ERROR with `code`.
void ExpectError(Channel &ch, int code) {
  wire::Result ignored;
  FrameHeader h;
  Status st = ch.RecvReply(FRAME_RESULT, 0, &ignored, &h);
  INFO("got: " << st.ToString());
  CHECK(st.code() == code);
}

void GoodCall(const E2EDaemon &d) {
  double a[4] = {1, 2, 3, 4};
  REQUIRE(Ninf_call(d.Name("echo").c_str(), 4L, a) == 0);
  CHECK(a[3] == 4.0);
}

// Sends CALL name + an ARGS frame with the given scalars and declared
// payload length, and `payload_bytes` real bytes of payload.
void SendCall(Channel &ch, const char *name, std::vector<int64_t> scalars,
              uint64_t declared_payload, uint64_t payload_bytes) {
  wire::CallRequest req;
  req.set_name(name);
  REQUIRE(ch.SendFrame(FRAME_CALL, &req).ok());
  wire::Args args;
  for (int64_t s : scalars) args.add_scalars()->set_i(s);
  std::string hdr;
  args.SerializeToString(&hdr);
  FrameHeader h;
  h.type = FRAME_ARGS;
  h.header_length = static_cast<uint32_t>(hdr.size());
  h.payload_length = declared_payload;
  uint8_t fixed[kFrameHeaderSize];
  EncodeFrameHeader(h, fixed);
  SendRaw(ch, fixed, sizeof fixed);
  SendRaw(ch, hdr.data(), hdr.size());
  std::vector<char> zeros(64 * 1024);
  while (payload_bytes > 0) {
    std::size_t n = std::min<uint64_t>(payload_bytes, zeros.size());
    if (::send(ch.fd(), zeros.data(), n, MSG_NOSIGNAL) <= 0) break;  // peer gave up: fine
    payload_bytes -= n;
  }
}

}  // namespace

TEST_CASE("bad_garbage_bytes", "[e2e][bad]") {
  E2EDaemon d;
  auto ch = Connect(d);
  const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  SendRaw(*ch, junk, sizeof junk - 1);
  ExpectError(*ch, NINF_ERR_PROTOCOL);
  GoodCall(d);
}

TEST_CASE("bad_wrong_magic_and_version", "[e2e][bad]") {
  E2EDaemon d;
  FrameHeader h;
  h.type = FRAME_LIST;
  uint8_t fixed[kFrameHeaderSize];
  EncodeFrameHeader(h, fixed);
  fixed[1] = 'X';
  auto a = Connect(d);
  SendRaw(*a, fixed, sizeof fixed);
  ExpectError(*a, NINF_ERR_PROTOCOL);

  EncodeFrameHeader(h, fixed);
  fixed[4] = 77;
  auto b = Connect(d);
  SendRaw(*b, fixed, sizeof fixed);
  ExpectError(*b, NINF_ERR_VERSION);
  GoodCall(d);
}

TEST_CASE("bad_truncated_frame", "[e2e][bad]") {
  E2EDaemon d;
  {
    auto ch = Connect(d);
    FrameHeader h;
    h.type = FRAME_QUERY_INTERFACE;
    h.header_length = 100;
    uint8_t fixed[kFrameHeaderSize];
    EncodeFrameHeader(h, fixed);
    SendRaw(*ch, fixed, sizeof fixed);
    SendRaw(*ch, "abc", 3);
  }  // closed mid-frame
  GoodCall(d);
}

TEST_CASE("bad_disconnect_in_middle_of_array", "[e2e][bad]") {
  E2EDaemon d;
  {
    auto ch = Connect(d);
    const int64_t n = 1 << 20;  // 8 MiB announced, 1 MiB sent
    SendCall(*ch, "echo", {n}, n * 8, 1 << 20);
  }
  GoodCall(d);
  // The broken call is accounted as failed or cancelled, never completed.
  CHECK(d.WaitForStat("failed", 1) + d.Stat("cancelled") >= 1);
  CHECK(d.ZombieChildren() == 0);
}

TEST_CASE("bad_unknown_function", "[e2e][bad]") {
  E2EDaemon d;
  auto ch = Connect(d);
  wire::QueryInterface q;
  q.set_name("does_not_exist");
  REQUIRE(ch->SendFrame(FRAME_QUERY_INTERFACE, &q).ok());
  ExpectError(*ch, NINF_ERR_FUNCTION_NOT_FOUND);
  auto c2 = Connect(d);
  SendCall(*c2, "does_not_exist", {}, 0, 0);
  ExpectError(*c2, NINF_ERR_FUNCTION_NOT_FOUND);
  GoodCall(d);
}

TEST_CASE("bad_argument_list_mismatch", "[e2e][bad]") {
  E2EDaemon d;
  {
    auto ch = Connect(d);  // echo takes one scalar; send none
    SendCall(*ch, "echo", {}, 0, 0);
    ExpectError(*ch, NINF_ERR_ARGUMENT_MISMATCH);
  }
  {
    auto ch = Connect(d);  // n = 4 needs 32 bytes; send 16
    SendCall(*ch, "echo", {4}, 16, 16);
    ExpectError(*ch, NINF_ERR_ARGUMENT_MISMATCH);
  }
  {
    auto ch = Connect(d);  // two scalars where one is expected
    SendCall(*ch, "echo", {4, 5}, 32, 32);
    ExpectError(*ch, NINF_ERR_ARGUMENT_MISMATCH);
  }
  GoodCall(d);
  CHECK(d.ZombieChildren() == 0);
}

TEST_CASE("bad_dimensions_overflow", "[e2e][bad]") {
  E2EDaemon d;
  {
    auto ch = Connect(d);  // dmmul: n*n doubles with n = 2^40 overflows 64 bits
    SendCall(*ch, "dmmul", {int64_t{1} << 40}, 0, 0);
    ExpectError(*ch, NINF_ERR_OVERFLOW);
  }
  {
    auto ch = Connect(d);  // negative dimension
    SendCall(*ch, "echo", {-5}, 0, 0);
    ExpectError(*ch, NINF_ERR_ARGUMENT_MISMATCH);
  }
  GoodCall(d);
}

TEST_CASE("bad_over_per_call_maximum", "[e2e][bad]") {
  E2EDaemon d({"--max-call-bytes", "1048576"});
  {
    auto ch = Connect(d);  // 8 MiB declared against a 1 MiB maximum, sent for real
    SendCall(*ch, "echo", {1 << 20}, 8u << 20, 8u << 20);
    ExpectError(*ch, NINF_ERR_TOO_LARGE);
  }
  {
    auto ch = Connect(d);  // sizes within the frame limit but arrays over it
    SendCall(*ch, "source", {1 << 20}, 0, 0);
    ExpectError(*ch, NINF_ERR_TOO_LARGE);
  }
  GoodCall(d);
  CHECK(d.ZombieChildren() == 0);
}

// C varargs mistakes, as libninf sees them before anything is sent: the
// message names the argument's position and the likely cause.
TEST_CASE("bad_c_arguments_are_named_with_their_likely_cause", "[e2e][bad]") {
  E2EDaemon d;
  std::vector<double> a(4), b(2);
  std::vector<int> ipiv(2);
  int info = 0;
  // n = -5: what a left-out argument before the arrays reads in its place.
  CHECK(Ninf_call(d.Name("dgesv").c_str(), -5, 1, a.data(), 2, ipiv.data(), b.data(), 2, &info) !=
        0);
  CHECK(Ninf_get_error() == NINF_ERR_ARGUMENT_MISMATCH);
  CHECK_THAT(std::string(Ninf_get_error_detail()),
             Catch::Contains("argument 3 of dgesv ('a') would have -5 elements") &&
                 Catch::Contains("left out") && Catch::Contains("The call is dgesv(IN int n"));
}

TEST_CASE("bad_string_where_a_character_goes", "[e2e][bad]") {
  E2EDaemon d({"--registry", ARGS_REGISTRY_DIR});
  double v[4] = {0, 0, 0, 0};
  long filled = 0;
  // What a pointer's bits look like through a char's varargs slot.
  CHECK(Ninf_call(d.Name("jobsized").c_str(), 0x5f3a10, 4, v, &filled) != 0);
  CHECK(Ninf_get_error() == NINF_ERR_ARGUMENT_MISMATCH);
  CHECK_THAT(std::string(Ninf_get_error_detail()),
             Catch::Contains("argument 1 of jobsized ('job') = 6240784 does not fit a char") &&
                 Catch::Contains("a string (\"N\") passed where a character ('N') goes?"));
  CHECK(filled == 0);
}

TEST_CASE("bad_optional_array_sized_by_a_job_character_is_never_overrun", "[e2e][bad]") {
  // LAPACK's 1-element vl for jobvl = 'N': the IDL sizes it from the
  // character, so the one element is all that comes back.
  E2EDaemon d({"--registry", ARGS_REGISTRY_DIR});
  double v[5] = {0, 0, -1, -1, -1};
  long filled = 0;
  REQUIRE(Ninf_call(d.Name("jobsized").c_str(), 'N', 4, v, &filled) == 0);
  CHECK(filled == 1);
  CHECK(v[0] == 7.0);
  CHECK(v[1] == 0.0);  // past the one element: untouched
  REQUIRE(Ninf_call(d.Name("jobsized").c_str(), 'V', 4, v, &filled) == 0);
  CHECK(filled == 4);
  CHECK(v[3] == 7.0);
  CHECK(v[4] == -1.0);
}
