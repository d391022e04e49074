// Unit tests of the protocol layer: frame encoding and decoding, dimension
// expressions, argument layout, and the control channel.
#include <linux/sockios.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "ninf.pb.h"
#include "protocol/address.h"
#include "protocol/control.h"
#include "protocol/control_bridge.h"
#include "protocol/frame.h"
#include "protocol/hex.h"
#include "protocol/install_paths.h"
#include "protocol/launch.h"
#include "protocol/layout.h"
#include "protocol/tls.h"
#include "protocol/utf8.h"
#include "protocol/wire.h"

using namespace ninf;

namespace {

wire::Param *AddParam(wire::FunctionInterface *f, const char *name, wire::Mode mode,
                      wire::Type type) {
  wire::Param *p = f->add_params();
  p->set_name(name);
  p->set_mode(mode);
  p->set_type(type);
  return p;
}

void Node(wire::Expr *e, wire::ExprNode::Op op, int64_t value = 0) {
  wire::ExprNode *n = e->add_nodes();
  n->set_op(op);
  n->set_value(value);
}

}  // namespace

TEST_CASE("frame_roundtrip", "[frame]") {
  FrameHeader h;
  h.type = FRAME_ARGS;
  h.header_length = 17;
  h.payload_length = (5ull << 32) + 3;  // over 4 GiB: lengths are 64-bit
  uint8_t buf[kFrameHeaderSize];
  EncodeFrameHeader(h, buf);
  CHECK(std::memcmp(buf, "NINF", 4) == 0);
  FrameHeader out;
  REQUIRE(DecodeFrameHeader(buf, UINT64_MAX, &out).ok());
  CHECK(out.type == FRAME_ARGS);
  CHECK(out.header_length == 17);
  CHECK(out.payload_length == (5ull << 32) + 3);
}

TEST_CASE("frame_rejects_bad_input", "[frame]") {
  FrameHeader h;
  h.type = FRAME_CALL;
  uint8_t good[kFrameHeaderSize];
  EncodeFrameHeader(h, good);
  uint8_t buf[kFrameHeaderSize];
  FrameHeader out;

  std::memcpy(buf, good, sizeof buf);
  buf[0] = 'X';
  CHECK(DecodeFrameHeader(buf, 0, &out).code() == NINF_ERR_PROTOCOL);

  std::memcpy(buf, good, sizeof buf);
  buf[4] = 99;
  Status st = DecodeFrameHeader(buf, 0, &out);
  CHECK(st.code() == NINF_ERR_VERSION);
  CHECK(st.message().find("99") != std::string::npos);

  std::memcpy(buf, good, sizeof buf);
  buf[6] = 0xff;
  CHECK(DecodeFrameHeader(buf, 0, &out).code() == NINF_ERR_PROTOCOL);

  std::memcpy(buf, good, sizeof buf);
  buf[11] = 0x10;  // header length 256 MiB
  CHECK(DecodeFrameHeader(buf, 0, &out).code() == NINF_ERR_PROTOCOL);

  std::memcpy(buf, good, sizeof buf);
  buf[12] = 1;  // reserved
  CHECK(DecodeFrameHeader(buf, 0, &out).code() == NINF_ERR_PROTOCOL);

  h.payload_length = 1000;
  EncodeFrameHeader(h, buf);
  CHECK(DecodeFrameHeader(buf, 999, &out).code() == NINF_ERR_TOO_LARGE);
  CHECK(out.payload_length == 1000);  // known, so the receiver can skip it
}

TEST_CASE("expr_precedence_and_cond", "[layout]") {
  wire::FunctionInterface f;
  f.set_name("f");
  AddParam(&f, "n", wire::MODE_IN, wire::TYPE_INT);
  AddParam(&f, "m", wire::MODE_IN, wire::TYPE_LONG);
  int64_t values[] = {3, 0};
  wire::Expr e;  // n > 2 ? n ^ 2 : n / m  (the untaken branch divides by zero)
  Node(&e, wire::ExprNode::COND);
  Node(&e, wire::ExprNode::GT);
  Node(&e, wire::ExprNode::PARAM, 0);
  Node(&e, wire::ExprNode::CONST, 2);
  Node(&e, wire::ExprNode::POW);
  Node(&e, wire::ExprNode::PARAM, 0);
  Node(&e, wire::ExprNode::CONST, 2);
  Node(&e, wire::ExprNode::DIV);
  Node(&e, wire::ExprNode::PARAM, 0);
  Node(&e, wire::ExprNode::PARAM, 1);
  int64_t out = 0;
  REQUIRE(EvalExpr(f, e, values, &out).ok());
  CHECK(out == 9);
  values[0] = 1;  // now the division is taken
  CHECK(EvalExpr(f, e, values, &out).code() == NINF_ERR_ARGUMENT_MISMATCH);
}

TEST_CASE("expr_rejects_malformed_trees", "[layout]") {
  wire::FunctionInterface f;
  f.set_name("f");
  AddParam(&f, "a", wire::MODE_IN, wire::TYPE_DOUBLE);
  int64_t values[] = {0};
  int64_t out;
  wire::Expr truncated;
  Node(&truncated, wire::ExprNode::ADD);
  Node(&truncated, wire::ExprNode::CONST, 1);
  CHECK(EvalExpr(f, truncated, values, &out).code() == NINF_ERR_PROTOCOL);
  wire::Expr bad_ref;  // refers to a double parameter
  Node(&bad_ref, wire::ExprNode::PARAM, 0);
  CHECK(EvalExpr(f, bad_ref, values, &out).code() == NINF_ERR_PROTOCOL);
  wire::Expr out_of_range;
  Node(&out_of_range, wire::ExprNode::PARAM, 7);
  CHECK(EvalExpr(f, out_of_range, values, &out).code() == NINF_ERR_PROTOCOL);
}

// Signatures print each dimension as the IDL wrote it (issue 31: "a[][]"
// told a caller nothing), with only the parentheses the grammar needs.
TEST_CASE("signature_prints_dimension_expressions", "[layout]") {
  wire::FunctionInterface f;
  f.set_name("dgesv");
  AddParam(&f, "n", wire::MODE_IN, wire::TYPE_INT);
  wire::Param *a = AddParam(&f, "a", wire::MODE_INOUT, wire::TYPE_DOUBLE);
  Node(a->add_dims(), wire::ExprNode::PARAM, 0);
  Node(a->add_dims(), wire::ExprNode::PARAM, 2);
  AddParam(&f, "lda", wire::MODE_IN, wire::TYPE_INT);
  wire::Param *info = AddParam(&f, "info", wire::MODE_OUT, wire::TYPE_INT);
  info->set_pointer(true);
  Node(info->add_dims(), wire::ExprNode::CONST, 1);
  REQUIRE(ValidateInterface(f).ok());
  CHECK(Signature(f) == "dgesv(IN int n, INOUT double a[n][lda], IN int lda, OUT int *info)");

  wire::Expr e;  // (n + lda) * -(-n) ^ 2 - (n - lda): prefix order
  Node(&e, wire::ExprNode::SUB);
  Node(&e, wire::ExprNode::MUL);
  Node(&e, wire::ExprNode::ADD);
  Node(&e, wire::ExprNode::PARAM, 0);
  Node(&e, wire::ExprNode::PARAM, 2);
  Node(&e, wire::ExprNode::NEG);
  Node(&e, wire::ExprNode::POW);
  Node(&e, wire::ExprNode::NEG);
  Node(&e, wire::ExprNode::PARAM, 0);
  Node(&e, wire::ExprNode::CONST, 2);
  Node(&e, wire::ExprNode::SUB);
  Node(&e, wire::ExprNode::PARAM, 0);
  Node(&e, wire::ExprNode::PARAM, 2);
  CHECK(ExprText(f, e) == "(n + lda) * -(-n)^2 - (n - lda)");

  wire::Expr cond;  // (n > 2 ? n : 1) + 1, and a power's right-associativity
  Node(&cond, wire::ExprNode::ADD);
  Node(&cond, wire::ExprNode::COND);
  Node(&cond, wire::ExprNode::GT);
  Node(&cond, wire::ExprNode::PARAM, 0);
  Node(&cond, wire::ExprNode::CONST, 2);
  Node(&cond, wire::ExprNode::PARAM, 0);
  Node(&cond, wire::ExprNode::CONST, 1);
  Node(&cond, wire::ExprNode::POW);
  Node(&cond, wire::ExprNode::POW);
  Node(&cond, wire::ExprNode::CONST, 2);
  Node(&cond, wire::ExprNode::CONST, 3);
  Node(&cond, wire::ExprNode::CONST, 2);
  CHECK(ExprText(f, cond) == "(n > 2 ? n : 1) + (2^3)^2");

  // A constant compared with a char parameter prints as the character.
  wire::FunctionInterface g;
  g.set_name("dgeev");
  AddParam(&g, "jobvl", wire::MODE_IN, wire::TYPE_CHAR);
  AddParam(&g, "n", wire::MODE_IN, wire::TYPE_INT);
  wire::Param *vl = AddParam(&g, "vl", wire::MODE_OUT, wire::TYPE_DOUBLE);
  wire::Expr *d = vl->add_dims();  // jobvl == 'V' ? n : 1
  Node(d, wire::ExprNode::COND);
  Node(d, wire::ExprNode::EQ);
  Node(d, wire::ExprNode::PARAM, 0);
  Node(d, wire::ExprNode::CONST, 'V');
  Node(d, wire::ExprNode::PARAM, 1);
  Node(d, wire::ExprNode::CONST, 1);
  wire::Expr *q = vl->add_dims();  // '\'' != jobvl ? 2 : n (a quote stays a number)
  Node(q, wire::ExprNode::COND);
  Node(q, wire::ExprNode::NE);
  Node(q, wire::ExprNode::CONST, '\'');
  Node(q, wire::ExprNode::PARAM, 0);
  Node(q, wire::ExprNode::CONST, 2);
  Node(q, wire::ExprNode::PARAM, 1);
  REQUIRE(ValidateInterface(g).ok());
  CHECK(Signature(g) ==
        "dgeev(IN char jobvl, IN int n, OUT double vl[jobvl == 'V' ? n : 1][39 != jobvl ? 2 : n])");

  // A peer's malformed tree still prints, with '?' where it breaks.
  wire::Expr truncated;
  Node(&truncated, wire::ExprNode::ADD);
  Node(&truncated, wire::ExprNode::PARAM, 0);
  CHECK(ExprText(f, truncated) == "n + ?");
  wire::Expr stray;
  Node(&stray, wire::ExprNode::PARAM, 9);
  Node(&stray, wire::ExprNode::PARAM, 0);
  CHECK(ExprText(f, stray) == "? ?");
}

TEST_CASE("layout_sizes_overflow_and_limit", "[layout]") {
  wire::FunctionInterface f;
  f.set_name("echo2");
  AddParam(&f, "n", wire::MODE_IN, wire::TYPE_LONG);
  wire::Param *a = AddParam(&f, "a", wire::MODE_INOUT, wire::TYPE_DOUBLE);
  Node(a->add_dims(), wire::ExprNode::PARAM, 0);
  Node(a->add_dims(), wire::ExprNode::PARAM, 0);
  wire::Param *w = AddParam(&f, "w", wire::MODE_WORK, wire::TYPE_INT);
  Node(w->add_dims(), wire::ExprNode::PARAM, 0);
  REQUIRE(ValidateInterface(f).ok());

  int64_t values[] = {10, 0, 0};
  CallLayout layout;
  REQUIRE(ComputeLayout(f, values, 0, &layout).ok());
  CHECK(layout.params[1].bytes == 800);
  CHECK(layout.send_bytes == 800);
  CHECK(layout.return_bytes == 800);
  CHECK(layout.total_bytes == 840);

  CHECK(ComputeLayout(f, values, 839, &layout).code() == NINF_ERR_TOO_LARGE);
  values[0] = int64_t{1} << 31;  // (2^31)^2 * 8 bytes = 2^65: overflow
  CHECK(ComputeLayout(f, values, 0, &layout).code() == NINF_ERR_OVERFLOW);
  values[0] = -1;
  CHECK(ComputeLayout(f, values, 0, &layout).code() == NINF_ERR_ARGUMENT_MISMATCH);
}

TEST_CASE("validate_rejects_out_scalar_and_string_array", "[layout]") {
  wire::FunctionInterface f;
  f.set_name("f");
  AddParam(&f, "x", wire::MODE_OUT, wire::TYPE_INT);
  CHECK(ValidateInterface(f).code() == NINF_ERR_PROTOCOL);
  wire::FunctionInterface g;
  g.set_name("g");
  Node(AddParam(&g, "s", wire::MODE_IN, wire::TYPE_STRING)->add_dims(), wire::ExprNode::CONST, 2);
  CHECK(ValidateInterface(g).code() == NINF_ERR_PROTOCOL);
}

TEST_CASE("validate_rejects_text_that_is_not_utf8", "[layout]") {
  wire::FunctionInterface f;
  f.set_name("f");
  f.set_description("caf\xc3\xa9 \xf0\x9f\x98\x80");
  AddParam(&f, "n", wire::MODE_IN, wire::TYPE_INT);
  REQUIRE(ValidateInterface(f).ok());
  f.set_description("caf\xe9");  // Latin-1
  CHECK(ValidateInterface(f).code() == NINF_ERR_PROTOCOL);
  f.set_description("ok");
  f.mutable_params(0)->set_name("n\xc0\x80");  // an overlong NUL
  CHECK(ValidateInterface(f).code() == NINF_ERR_PROTOCOL);
}

TEST_CASE("utf8_validity", "[utf8]") {
  CHECK(IsValidUtf8(""));
  CHECK(IsValidUtf8("plain ASCII"));
  CHECK(IsValidUtf8("\xe6\x97\xa5\xe6\x9c\xac"));  // two CJK characters
  CHECK(IsValidUtf8("\xf4\x8f\xbf\xbf"));          // U+10FFFF
  CHECK_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));    // above U+10FFFF
  CHECK_FALSE(IsValidUtf8("\xed\xa0\x80"));        // a surrogate
  CHECK_FALSE(IsValidUtf8("\xe0\x80\xaf"));        // overlong
  CHECK_FALSE(IsValidUtf8("\xe6\x97"));            // cut short
  CHECK_FALSE(IsValidUtf8("\x80"));                // a lone continuation
  CHECK_FALSE(IsValidUtf8("\xff"));
}

TEST_CASE("channel_gathers_and_scatters_arrays", "[wire]") {
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  Channel a(sv[0]), b(sv[1], 5000);
  std::vector<double> x(100000), y(50000);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = -static_cast<double>(i);
  std::thread sender([&] {
    wire::Args args;
    args.add_scalars()->set_i(42);
    iovec iov[] = {{x.data(), x.size() * 8}, {y.data(), y.size() * 8}};
    CHECK(a.SendFrame(FRAME_ARGS, &args, iov).ok());
  });
  FrameHeader h;
  wire::Args args;
  REQUIRE(b.RecvReply(FRAME_ARGS, UINT64_MAX, &args, &h).ok());
  CHECK(args.scalars(0).i() == 42);
  REQUIRE(h.payload_length == (x.size() + y.size()) * 8);
  std::vector<double> rx(x.size()), ry(y.size());
  iovec into[] = {{rx.data(), rx.size() * 8}, {ry.data(), ry.size() * 8}};
  REQUIRE(b.RecvPayload(into).ok());
  sender.join();
  CHECK(rx == x);
  CHECK(ry == y);
}

// A receiver beats while bytes arrive, and only then. Each piece below after
// the first is written three periods after the receiver took the first or
// beat last, so the read that takes it is due to beat however the threads
// are scheduled (one beat per piece, none more; with 60 ms against the
// 50 ms period a receiver descheduled for 10 ms would have seen the piece
// early, not beaten, and waited for bytes that never came); a writer that
// stalls hears nothing.
TEST_CASE("channel_beats_while_a_payload_arrives", "[wire]") {
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  Channel a(sv[0], 5000), b(sv[1], 5000);
  constexpr std::size_t kPiece = 1024;
  constexpr int kPieces = 5;
  std::vector<char> sent(kPiece * kPieces), got(sent.size());
  for (std::size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<char>(i * 7);
  std::thread receiver([&] {
    iovec into{got.data(), got.size()};
    CHECK(b.RecvPayload(std::span<const iovec>(&into, 1), 50).ok());
  });
  auto write_piece = [&](int i) {
    REQUIRE(::write(sv[0], sent.data() + i * kPiece, kPiece) == static_cast<ssize_t>(kPiece));
  };
  auto next_beat = [&] {
    FrameHeader h;
    REQUIRE(a.RecvHeader(0, &h).ok());
    CHECK(h.type == FRAME_HEARTBEAT);
  };
  write_piece(0);
  // Taken (the receiver's clock starts at its first bytes).
  for (int unread = 1; unread > 0;) {
    REQUIRE(::ioctl(sv[0], SIOCOUTQ, &unread) == 0);
    if (unread > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (int i = 1; i < kPieces - 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    write_piece(i);
    next_beat();
  }
  // Stalled: the receiver waits for bytes and sends nothing.
  pollfd quiet{sv[0], POLLIN, 0};
  CHECK(::poll(&quiet, 1, 200) == 0);
  write_piece(kPieces - 1);
  next_beat();
  receiver.join();
  CHECK(got == sent);
}

// A writer that reads nothing while it writes (as a client sending its
// arguments) leaves the beats in the socket: once there is no room for
// more, beats are left out, and the payload is still read to its end. The
// beats' side gets the least send buffer the kernel allows, so with a beat
// per millisecond it runs out of room long before the payload is in.
TEST_CASE("channel_beats_never_stall_a_payload", "[wire]") {
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  const int least = 1;
  REQUIRE(::setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &least, sizeof least) == 0);
  Channel b(sv[1], 5000);
  constexpr std::size_t kPiece = 4096;
  constexpr int kPieces = 400;
  std::vector<char> sent(kPiece * kPieces), got(sent.size());
  for (std::size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<char>(i * 13);
  Status received;
  std::thread receiver([&] {
    iovec into{got.data(), got.size()};
    received = b.RecvPayload(std::span<const iovec>(&into, 1), 1);
  });
  // Written without blocking: a receiver stalled by its beats would leave
  // the writer waiting for room for good.
  bool written = true;
  for (int i = 0; i < kPieces && written; ++i) {
    std::size_t off = 0;
    while (off < kPiece && written) {
      const ssize_t n = ::send(sv[0], sent.data() + i * kPiece + off, kPiece - off, MSG_DONTWAIT);
      if (n > 0) {
        off += static_cast<std::size_t>(n);
        continue;
      }
      pollfd room{sv[0], POLLOUT, 0};
      written = n < 0 && errno == EAGAIN && ::poll(&room, 1, 3000) == 1;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  CHECK(written);
  if (!written) ::shutdown(sv[0], SHUT_RDWR);  // ends the receiver's wait
  receiver.join();
  CHECK(received.ok());
  CHECK(got == sent);
  // Some beats were sent (not none), and the writer finds them intact.
  Channel a(sv[0], 1000);
  FrameHeader h;
  REQUIRE(a.RecvHeader(0, &h).ok());
  CHECK(h.type == FRAME_HEARTBEAT);
}

TEST_CASE("channel_reports_error_frames_and_eof", "[wire]") {
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  Channel b(sv[1], 5000);
  {
    Channel a(sv[0]);
    REQUIRE(a.SendError(Status(NINF_ERR_FUNCTION_NOT_FOUND, "no such thing")).ok());
  }  // closes
  FrameHeader h;
  wire::Result r;
  Status st = b.RecvReply(FRAME_RESULT, 0, &r, &h);
  CHECK(st.code() == NINF_ERR_FUNCTION_NOT_FOUND);
  CHECK(st.message() == "no such thing");
  st = b.RecvReply(FRAME_RESULT, 0, &r, &h);
  CHECK(st.code() == NINF_ERR_COMMUNICATION);
}

TEST_CASE("control_passes_descriptors", "[control]") {
  int sv[2], pipefd[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0);
  REQUIRE(::pipe(pipefd) == 0);
  ControlMsg m{.kind = CTL_HANDOFF, .call_id = 7, .max_call_bytes = 123};
  REQUIRE(SendControl(sv[0], m, pipefd[1]) == 0);
  ControlMsg got;
  int fd = -1;
  REQUIRE(RecvControl(sv[1], &got, &fd) == 1);
  CHECK(got.kind == CTL_HANDOFF);
  CHECK(got.call_id == 7);
  CHECK(got.max_call_bytes == 123);
  REQUIRE(fd >= 0);
  CHECK(::write(fd, "x", 1) == 1);  // the passed fd is the pipe's write end
  char c = 0;
  CHECK(::read(pipefd[0], &c, 1) == 1);
  CHECK(c == 'x');
  ::close(fd);
  ::close(sv[0]);
  CHECK(RecvControl(sv[1], &got, &fd) == 0);
  ::close(sv[1]);
  ::close(pipefd[0]);
  ::close(pipefd[1]);
}

TEST_CASE("control_messages_cross_a_stream_socket_in_pieces", "[control]") {
  // The TCP channel of an executable on another host (launch.h): no
  // message boundaries, so a message may arrive in parts.
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  ninf::ControlMsg sent;
  sent.kind = ninf::CTL_HANDOFF;
  sent.call_id = 77;
  sent.redirect_token[3] = 9;
  std::thread writer([&] {
    const char *bytes = reinterpret_cast<const char *>(&sent);
    REQUIRE(::write(sv[1], bytes, 10) == 10);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(::write(sv[1], bytes + 10, sizeof sent - 10) == static_cast<ssize_t>(sizeof sent - 10));
    ::close(sv[1]);
  });
  ninf::ControlMsg got;
  int fd = 123;
  CHECK(ninf::RecvControl(sv[0], &got, &fd) == 1);
  writer.join();
  CHECK(fd == -1);
  CHECK(got.kind == ninf::CTL_HANDOFF);
  CHECK(got.call_id == 77);
  CHECK(got.redirect_token[3] == 9);
  CHECK(ninf::RecvControl(sv[0], &got, nullptr) == 0);  // the end of the stream
  ::close(sv[0]);
}

// Channel::Arrived: whether a frame's rest waits in the socket already (an
// executable then reads it without asking ninfd for room). In plaintext to
// the byte; over TLS what the session holds decrypted or the socket holds
// as records. (Bytes OpenSSL read ahead but has not decrypted are seen by
// neither: a large frame over TLS may read as still coming, which costs
// its call one question to ninfd, never a wrong answer.)
TEST_CASE("channel_tells_whether_a_frame_has_arrived", "[wire][tls]") {
  struct Case {
    bool tls;
    std::size_t doubles;
  };
  // 100 KiB in plaintext; over TLS 1 KiB, which travels as one record with
  // the frame's header.
  for (const Case c : {Case{false, 12800}, Case{true, 128}}) {
    INFO((c.tls ? "tls" : "plaintext"));
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    Channel a(sv[0], 3000), b(sv[1], 3000);
    if (c.tls) {
      ninf::tls::Psk key{};
      key.fill(3);
      ninf::tls::SslPtr server_ssl, client_ssl;
      ninf::Status server_st;
      std::thread server([&] {
        server_st = ninf::tls::PskAccept(sv[1], key, ninf::tls::PskKeyExchange::kKeyAlone, 3000,
                                         &server_ssl);
      });
      REQUIRE(
          ninf::tls::PskConnect(sv[0], key, ninf::tls::PskKeyExchange::kKeyAlone, 3000, &client_ssl)
              .ok());
      server.join();
      REQUIRE(server_st.ok());
      a.UseTls(std::move(client_ssl));
      b.UseTls(std::move(server_ssl));
    }
    std::vector<double> x(c.doubles, 1.5);
    wire::Args args;
    args.add_scalars()->set_i(7);
    iovec iov{x.data(), x.size() * sizeof(double)};
    REQUIRE(a.SendFrame(FRAME_ARGS, &args, {&iov, 1}).ok());
    FrameHeader h;
    REQUIRE(b.RecvHeader(UINT64_MAX, &h).ok());
    const uint64_t rest = uint64_t{h.header_length} + h.payload_length;
    CHECK(b.Arrived(rest));
    CHECK_FALSE(b.Arrived(rest + 1));  // one byte more is still to come
    REQUIRE(b.RecvMessage(h, &args).ok());
    CHECK(b.Arrived(h.payload_length));
    std::vector<double> y(x.size());
    iovec into{y.data(), y.size() * sizeof(double)};
    REQUIRE(b.RecvPayload({&into, 1}).ok());
    CHECK(y == x);
    CHECK_FALSE(b.Arrived(1));  // nothing more has come
  }
}

TEST_CASE("channel_replace_keeps_the_descriptor_number", "[wire]") {
  int a[2], b[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, a) == 0);
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, b) == 0);
  ninf::Channel ch(a[0], 2000);
  const int number = ch.fd();
  REQUIRE(ch.Replace(b[0]).ok());
  CHECK(ch.fd() == number);  // a canceller holding the number reaches the new peer
  char c;
  CHECK(::read(a[1], &c, 1) == 0);  // the old connection is closed
  ninf::wire::End end;
  REQUIRE(ch.SendFrame(ninf::FRAME_END, &end).ok());
  ninf::Channel peer(b[1], 2000);
  ninf::FrameHeader h;
  REQUIRE(peer.RecvHeader(0, &h).ok());
  CHECK(h.type == ninf::FRAME_END);
  ::close(a[1]);
}

namespace {

// A socket listening on 127.0.0.1, any port (in *port).
int LoopbackListener(int *port) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener, 4) == 0);
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr *>(&addr), &len) == 0);
  *port = ntohs(addr.sin_port);
  return listener;
}

// A client of a redirected call: connects to `port` and presents `token`.
int ClaimWith(int port, const std::string &token) {
  int fd = -1;
  REQUIRE(ninf::ConnectTcp("127.0.0.1", port, 2000, &fd).ok());
  ninf::Channel ch(::dup(fd));
  ninf::wire::Claim claim;
  claim.set_token(token);
  REQUIRE(ch.SendFrame(ninf::FRAME_CLAIM, &claim).ok());
  return fd;
}

}  // namespace

TEST_CASE("accept_redirected_takes_only_the_client_with_the_token", "[launch]") {
  int port = 0;
  const int listener = LoopbackListener(&port);
  const std::string token(16, 'k');
  // A stranger (or a client of an earlier call) first, then the right one.
  const int stranger = ClaimWith(port, std::string(16, 'x'));
  const int client = ClaimWith(port, token);
  int taken = -1;
  REQUIRE(ninf::AcceptRedirected(listener, reinterpret_cast<const uint8_t *>(token.data()),
                                 token.size(), 5000, &taken)
              .ok());
  // The taken connection is the client's: what it sends next arrives.
  REQUIRE(::write(client, "z", 1) == 1);
  char c = 0;
  CHECK(::read(taken, &c, 1) == 1);
  CHECK(c == 'z');
  CHECK(::read(stranger, &c, 1) == 0);  // closed without an answer
  // Nobody else comes: a timeout, not a hang.
  int none = -1;
  ninf::Status st = ninf::AcceptRedirected(
      listener, reinterpret_cast<const uint8_t *>(token.data()), token.size(), 200, &none);
  CHECK(st.code() == NINF_ERR_TIMEOUT);
  CHECK(none == -1);
  for (int fd : {taken, client, stranger, listener}) ::close(fd);
}

TEST_CASE("accept_redirected_over_tls_takes_the_claim_inside_the_keyed_session", "[launch][tls]") {
  int port = 0;
  const int listener = LoopbackListener(&port);
  const std::string token(16, 'k');
  ninf::tls::Psk key{}, other{};
  key.fill(7);
  other.fill(8);
  // One client with another key and the right token, then the right one:
  // each runs the handshake and sends the claim inside it.
  auto client = [&](const ninf::tls::Psk &psk) {
    int fd = -1;
    REQUIRE(ninf::ConnectTcp("127.0.0.1", port, 2000, &fd).ok());
    auto ch = std::make_unique<ninf::Channel>(fd, 3000);
    ninf::tls::SslPtr ssl;
    if (ninf::tls::PskConnect(ch->fd(), psk, ninf::tls::PskKeyExchange::kKeyAlone, 3000, &ssl)
            .ok()) {
      ch->UseTls(std::move(ssl));
      ninf::wire::Claim claim;
      claim.set_token(token);
      (void)ch->SendFrame(ninf::FRAME_CLAIM, &claim);
    }
    return ch;
  };
  std::unique_ptr<ninf::Channel> wrong, right;
  std::thread clients([&] {
    wrong = client(other);
    right = client(key);
  });
  int taken = -1;
  ninf::tls::SslPtr session;
  ninf::Status st =
      ninf::AcceptRedirected(listener, reinterpret_cast<const uint8_t *>(token.data()),
                             token.size(), 5000, &taken, &key, &session);
  clients.join();
  REQUIRE(st.ok());
  REQUIRE(session);
  // The session is the right client's: a frame it sends arrives through it.
  ninf::Channel server(taken, 3000);
  server.UseTls(std::move(session));
  REQUIRE(right->SendFrame(ninf::FRAME_END, nullptr).ok());
  ninf::FrameHeader h;
  REQUIRE(server.RecvHeader(0, &h).ok());
  CHECK(h.type == ninf::FRAME_END);
  ::close(listener);
}

TEST_CASE("launch_id_and_key_come_from_the_token_and_do_not_show_it", "[launch][tls]") {
  const std::string token = "0123456789abcdef0123456789abcdef";
  const std::string id = ninf::LaunchId(token);
  CHECK(id.size() == ninf::kLaunchTokenChars);
  CHECK(id != token);
  CHECK(id == ninf::LaunchId(token));
  CHECK(id != ninf::LaunchId("1123456789abcdef0123456789abcdef"));
  const ninf::tls::Psk key = ninf::LaunchKey(token);
  CHECK(key == ninf::LaunchKey(token));
  CHECK(key != ninf::LaunchKey("1123456789abcdef0123456789abcdef"));
  // The id says nothing of the key: neither is a piece of the other.
  const std::string key_hex =
      ninf::HexOf(std::string_view(reinterpret_cast<const char *>(key.data()), key.size()));
  CHECK(id.find(key_hex.substr(0, 8)) == std::string::npos);
  CHECK(key_hex.find(id.substr(0, 8)) == std::string::npos);
}

TEST_CASE("psk_key_exchange_is_the_key_alone_or_with_x25519_and_mixed_kinds_agree", "[tls]") {
  using ninf::tls::PskKeyExchange;
  struct Case {
    PskKeyExchange client, server;
    int group;  // what the accepting side negotiated: 0 for none (psk_ke)
  };
  // The key alone on both sides makes no key exchange; a side of the other
  // kind (an older client or executable) still agrees, with ECDHE.
  const Case cases[] = {
      {PskKeyExchange::kKeyAlone, PskKeyExchange::kKeyAlone, 0},
      {PskKeyExchange::kWithEcdhe, PskKeyExchange::kWithEcdhe, NID_X25519},
      {PskKeyExchange::kKeyAlone, PskKeyExchange::kWithEcdhe, NID_X9_62_prime256v1},
      {PskKeyExchange::kWithEcdhe, PskKeyExchange::kKeyAlone, NID_X25519},
  };
  for (const Case &c : cases) {
    int pair[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    ninf::tls::Psk key{};
    key.fill(5);
    ninf::tls::SslPtr server_ssl, client_ssl;
    ninf::Status server_st;
    std::thread server(
        [&] { server_st = ninf::tls::PskAccept(pair[1], key, c.server, 3000, &server_ssl); });
    const ninf::Status client_st = ninf::tls::PskConnect(pair[0], key, c.client, 3000, &client_ssl);
    server.join();
    REQUIRE(client_st.ok());
    REQUIRE(server_st.ok());
    CHECK(SSL_get_negotiated_group(server_ssl.get()) == c.group);
    // And the session carries bytes.
    std::size_t put = 0, got = 0;
    char buf[4] = {};
    REQUIRE(SSL_write_ex(client_ssl.get(), "ping", 4, &put) == 1);
    REQUIRE(SSL_read_ex(server_ssl.get(), buf, sizeof buf, &got) == 1);
    CHECK(std::string(buf, got) == "ping");
    ::close(pair[0]);
    ::close(pair[1]);
  }
}

TEST_CASE("psk_server_session_runs_on_memory_and_refuses_another_key", "[tls]") {
  for (const bool same_key : {true, false}) {
    int pair[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    ninf::tls::Psk key{}, client_key{};
    key.fill(3);
    client_key.fill(same_key ? 3 : 4);
    std::unique_ptr<ninf::tls::PskServerSession> server;
    REQUIRE(ninf::tls::PskServerSession::Start(key, &server).ok());
    // Written before the handshake: it waits for it.
    REQUIRE(server->Write("early", 5).ok());
    ninf::Status client_st;
    std::string client_got;
    std::thread client([&] {
      ninf::tls::SslPtr ssl;
      client_st = ninf::tls::PskConnect(pair[0], client_key, ninf::tls::PskKeyExchange::kWithEcdhe,
                                        3000, &ssl);
      if (!client_st.ok()) return;
      std::size_t put = 0, got = 0;
      char buf[5];
      if (SSL_write_ex(ssl.get(), "hello", 5, &put) != 1 ||
          SSL_read_ex(ssl.get(), buf, sizeof buf, &got) != 1)
        client_st = ninf::Status(NINF_ERR_COMMUNICATION, "client I/O");
      client_got.assign(buf, got);
    });
    // The loop's part: records in from the socket, records out to it.
    std::string plain;
    ninf::Status st;
    for (int rounds = 0; rounds < 200 && st.ok() && plain.size() < 5; ++rounds) {
      pollfd p{pair[1], POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::read(pair[1], buf, sizeof buf);
      if (n <= 0) break;
      st = server->Feed(buf, static_cast<std::size_t>(n), &plain);
      const std::string out = server->TakeOutput();
      if (!out.empty()) REQUIRE(::write(pair[1], out.data(), out.size()) == ssize_t(out.size()));
    }
    if (same_key) {
      CHECK(st.ok());
      CHECK(server->established());
      CHECK(plain == "hello");
      ::shutdown(pair[1], SHUT_WR);
      client.join();
      CHECK(client_st.ok());
      CHECK(client_got == "early");
    } else {
      CHECK(st.code() == NINF_ERR_AUTH);
      CHECK_FALSE(server->established());
      const std::string alert = server->TakeOutput();
      if (!alert.empty()) (void)::write(pair[1], alert.data(), alert.size());
      ::shutdown(pair[1], SHUT_RDWR);
      client.join();
      CHECK_FALSE(client_st.ok());
    }
    ::close(pair[0]);
    ::close(pair[1]);
  }
}

TEST_CASE("control_bridge_carries_whole_messages_both_ways_and_ends_with_either_side",
          "[launch][tls]") {
  int pair[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
  ninf::tls::Psk key{};
  key.fill(9);
  // ninfd's side, played blocking: accepts the session, sends one message.
  ninf::tls::SslPtr ninfd_ssl;
  constexpr auto kEcdhe = ninf::tls::PskKeyExchange::kWithEcdhe;
  std::thread ninfd(
      [&] { REQUIRE(ninf::tls::PskAccept(pair[1], key, kEcdhe, 3000, &ninfd_ssl).ok()); });
  ninf::tls::SslPtr ssl;
  REQUIRE(ninf::tls::PskConnect(pair[0], key, kEcdhe, 3000, &ssl).ok());
  ninfd.join();
  int control = -1;
  REQUIRE(ninf::StartControlBridge(pair[0], std::move(ssl), &control).ok());
  SSL *to_executable = ninfd_ssl.get();
  ninf::ControlMsg out;
  out.kind = ninf::CTL_HANDOFF;
  out.call_id = 77;
  // Sent in two records: the executable still gets one whole message.
  const char *bytes = reinterpret_cast<const char *>(&out);
  std::size_t put = 0;
  REQUIRE(SSL_write_ex(to_executable, bytes, 10, &put) == 1);
  REQUIRE(SSL_write_ex(to_executable, bytes + 10, sizeof out - 10, &put) == 1);
  ninf::ControlMsg in;
  pollfd p{control, POLLIN, 0};
  REQUIRE(::poll(&p, 1, 3000) == 1);
  REQUIRE(ninf::RecvControl(control, &in, nullptr) == 1);
  CHECK(in.kind == ninf::CTL_HANDOFF);
  CHECK(in.call_id == 77);
  // The executable's answer, with a descriptor that cannot cross: the
  // message arrives without it.
  ninf::ControlMsg done;
  done.kind = ninf::CTL_CALL_DONE;
  done.call_id = 77;
  REQUIRE(ninf::SendControl(control, done, ::dup(0)) == 0);
  ninf::ControlMsg got;
  std::size_t have = 0;
  while (have < sizeof got) {
    std::size_t n = 0;
    REQUIRE(SSL_read_ex(to_executable, reinterpret_cast<char *>(&got) + have, sizeof got - have,
                        &n) == 1);
    have += n;
  }
  CHECK(got.kind == ninf::CTL_CALL_DONE);
  CHECK(got.call_id == 77);
  // The executable closes its end: ninfd reads the end of the stream.
  ::close(control);
  char c;
  std::size_t n = 0;
  CHECK(SSL_read_ex(to_executable, &c, 1, &n) == 0);
  ninfd_ssl.reset();
  ::close(pair[1]);
}

TEST_CASE("an installed program's prefix comes from its own location") {
  using ninf::PrefixOf;
  CHECK(PrefixOf("/opt/ninf/bin/ninfd", "bin", "/usr/local") == "/opt/ninf");
  // DESTDIR or a moved tree: the location wins over the configured prefix.
  CHECK(PrefixOf("/tmp/d/usr/local/bin/ninf-gen", "bin", "/usr/local") == "/tmp/d/usr/local");
  CHECK(PrefixOf("/p/sbin/x/ninfd", "sbin/x", "/usr") == "/p");
  // A build tree is not an installation.
  CHECK_FALSE(PrefixOf("/src/build/server/ninfd", "bin", "/usr/local"));
  CHECK_FALSE(PrefixOf("", "bin", "/usr/local"));
  // An absolute bindir: installed only when the program is in it.
  CHECK(PrefixOf("/usr/bin/ninfd", "/usr/bin", "/usr") == "/usr");
  CHECK_FALSE(PrefixOf("/home/u/bin/ninfd", "/usr/bin", "/usr"));
}

TEST_CASE("address_relay_form_names_a_server_behind_a_relay", "[address]") {
  HostPort hp;
  REQUIRE(ParseHostPort("site-b@relay.example.org:3300", HostPort{"", 3000}, &hp).ok());
  CHECK(hp.relay_name == "site-b");
  CHECK(hp.host == "relay.example.org");
  CHECK(hp.port == 3300);
  CHECK(hp.Key() == "site-b@relay.example.org:3300");
  // Without a port: the relay's, not ninfd's.
  REQUIRE(ParseHostPort("a.b_c-1@[::1]", HostPort{"", 3000}, &hp).ok());
  CHECK(hp.port == 3200);
  CHECK(hp.host == "::1");
  // A plain address after a relayed one keeps no name.
  REQUIRE(ParseHostPort("host:1", HostPort{"", 3000}, &hp).ok());
  CHECK(hp.relay_name.empty());
  CHECK(hp.Key() == "host:1");
  for (const char *bad : {"@relay:1", "bad name@relay:1", "a@b@relay:1", "a@unix:/tmp/s", "a@"})
    CHECK(!ParseHostPort(bad, HostPort{"", 3000}, &hp).ok());
  const std::string long_name = std::string(65, 'x') + "@relay:1";
  CHECK(!ParseHostPort(long_name, HostPort{"", 3000}, &hp).ok());
}

TEST_CASE("frame_types_in_the_gap_are_refused", "[frame]") {
  FrameHeader h;
  uint8_t bytes[kFrameHeaderSize];
  h.type = FRAME_RELAY_OPEN;
  EncodeFrameHeader(h, bytes);
  REQUIRE(DecodeFrameHeader(bytes, 0, &h).ok());
  CHECK(HandsOverStream(FRAME_RELAY_OPEN));
  CHECK(HandsOverStream(FRAME_CALL));
  CHECK(!HandsOverStream(FRAME_RELAY_REGISTER));
  h.type = 35;  // reserved, unnamed
  EncodeFrameHeader(h, bytes);
  CHECK(DecodeFrameHeader(bytes, 0, &h).code() == NINF_ERR_PROTOCOL);
}
