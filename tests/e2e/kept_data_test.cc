// ninfd's kept data (docs/transactions.md) attacked from outside, with raw
// frames against a real ninfd: stored objects are read only by their
// owner's key and only as what they are (a two-phase result never by
// FETCH); a data reference may name only a ninfd that proves itself, and a
// plain listener it names hears nothing of the call; a result is collected
// once, and a restart loses it with a clear error; uncollected results
// cost no descriptor each and are capped per key.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/ninf.h"
#include "ninf.pb.h"
#include "protocol/auth.h"
#include "protocol/frame.h"
#include "protocol/wire.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/server/daemon_fixture.h"

using namespace ninf;
using ninf::test::TempDir;

namespace {

const std::string kAlice = "key-of-alice-0123456789abcdef";
const std::string kBob = "key-of-bob-0123456789abcdefgh";
constexpr long kN = 8;  // doubles in echo's array

std::string WriteKeyFile(const TempDir &dir, const std::string &name, const std::string &text) {
  std::string path = dir.Join(name);
  std::ofstream(path, std::ios::trunc) << text << "\n";
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  return path;
}

// A raw connection to the daemon, authenticated with `key` ("": none).
std::unique_ptr<Channel> Connect(int port, const std::string &key) {
  int fd = -1;
  REQUIRE(ConnectTcp("127.0.0.1", port, 5000, &fd).ok());
  auto ch = std::make_unique<Channel>(fd, 20000);
  if (!key.empty()) REQUIRE(auth::AuthenticateToServer(*ch, {key, auth::KeyIdOf(key)}).ok());
  return ch;
}

// A daemon whose users alice and bob hold kAlice and kBob, with `more`
// flags.
std::vector<std::string> AliceAndBob(const TempDir &dir, std::vector<std::string> more = {}) {
  std::vector<std::string> args = UsersConfig(dir, {{"alice", kAlice, ""}, {"bob", kBob, ""}});
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::string Doubles(long n, double first) {
  std::string out(static_cast<std::size_t>(n) * sizeof(double), '\0');
  for (long i = 0; i < n; ++i) {
    const double v = first + static_cast<double>(i);
    std::memcpy(out.data() + i * sizeof v, &v, sizeof v);
  }
  return out;
}

// Sends echo(kN, a) as CALL + ARGS; `call` and `args` may carry more.
void SendEcho(Channel &ch, wire::CallRequest call, wire::Args args, const std::string &payload) {
  call.set_name("echo");
  call.set_call_id(7);
  args.add_scalars()->set_i(kN);
  iovec v{const_cast<char *>(payload.data()), payload.size()};
  REQUIRE(ch.SendFrame(FRAME_CALL, &call).ok());
  REQUIRE(
      ch.SendFrame(FRAME_ARGS, &args, std::span<const iovec>(&v, payload.empty() ? 0 : 1)).ok());
}

// A two-phase echo(kN) submitted with `key`, reserving `keep_bytes` for its
// result: its ticket, or the refusal.
Status Submit(int port, const std::string &key, wire::Submitted *ticket,
              uint64_t keep_bytes = 4096) {
  auto ch = Connect(port, key);
  wire::CallRequest call;
  call.set_submit(true);
  call.set_keep_bytes(keep_bytes);
  SendEcho(*ch, call, {}, Doubles(kN, 1));
  FrameHeader h;
  return ch->RecvReply(FRAME_SUBMITTED, 0, ticket, &h);
}

// One request with a StoreKey on a fresh connection with `key`; the answer
// of type `expected` with its payload in *payload, or the refusal.
Status Ask(int port, const std::string &key, FrameType type, uint64_t id, const std::string &token,
           FrameType expected, std::string *payload) {
  auto ch = Connect(port, key);
  wire::StoreKey k;
  k.set_id(id);
  k.set_token(token);
  REQUIRE(ch->SendFrame(type, &k).ok());
  FrameHeader h;
  wire::Result any;  // RESULT, DATA and RELEASED all parse as one (unknown fields kept)
  NINF_RETURN_IF_ERROR(ch->RecvReply(expected, uint64_t{1} << 30, &any, &h));
  payload->assign(h.payload_length, '\0');
  iovec v{payload->data(), payload->size()};
  return ch->RecvPayload(std::span<const iovec>(&v, 1));
}

// A counter of the daemon's stats, asked with `key` (-1 when absent).
long Stat(int port, const std::string &key, const std::string &name) {
  auto ch = Connect(port, key);
  wire::StatsRequest req;
  REQUIRE(ch->SendFrame(FRAME_STATS, &req).ok());
  wire::StatsReply reply;
  FrameHeader h;
  REQUIRE(ch->RecvReply(FRAME_STATS_REPLY, 0, &reply, &h).ok());
  const std::string text = "\n" + reply.text(), line = "\n" + name + ":";
  const std::size_t at = text.find(line);
  return at == std::string::npos ? -1 : std::atol(text.c_str() + at + line.size());
}

// Waits up to 10 s until Stat(...) reaches `at_least`; returns the last value.
long WaitForStat(int port, const std::string &key, const std::string &name, long at_least) {
  long v = -1;
  for (int i = 0; i < 200 && (v = Stat(port, key, name)) < at_least; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return v;
}

// COLLECT of a raw ticket, waiting while the call runs.
Status Collect(int port, const std::string &key, const wire::Submitted &t, std::string *payload) {
  for (int i = 0; i < 200; ++i) {
    Status st = Ask(port, key, FRAME_COLLECT, t.id(), t.token(), FRAME_RESULT, payload);
    if (st.code() != NINF_ERR_NOT_READY) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Status(NINF_ERR_TIMEOUT, "still running");
}

// A plain TCP listener on a free loopback port that records every byte its
// connections send, each closed once nothing has come for 300 ms.
class PlainListener {
 public:
  PlainListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd_, 8) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr *>(&a), &len) == 0);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~PlainListener() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  int accepted() const { return accepted_; }
  std::string received() {
    std::lock_guard<std::mutex> lock(mu_);
    return received_;
  }

 private:
  void Serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      ++accepted_;
      char buf[4096];
      for (;;) {
        pollfd q{c, POLLIN, 0};
        if (::poll(&q, 1, 300) <= 0) break;
        const ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        std::lock_guard<std::mutex> lock(mu_);
        received_.append(buf, static_cast<std::size_t>(n));
      }
      ::close(c);
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::mutex mu_;
  std::string received_;
  std::thread thread_;
};

// echo(kN, a) whose `a` is a data reference to `address`: the call's
// refusal (it cannot succeed: nothing there keeps entry 7).
Status EchoFromReference(int port, const std::string &key, const std::string &address,
                         const std::string &token) {
  auto ch = Connect(port, key);
  wire::Args args;
  wire::DataRef *ref = args.add_refs();
  ref->set_param(1);
  ref->set_address(address);
  ref->set_id(7);
  ref->set_token(token);
  ref->set_bytes(kN * sizeof(double));
  SendEcho(*ch, {}, args, "");
  FrameHeader h;
  wire::Result result;
  return ch->RecvReply(FRAME_RESULT, uint64_t{1} << 20, &result, &h);
}

}  // namespace

TEST_CASE("kept_data_two_phase_result_is_never_fetched", "[e2e][kept_data]") {
  // H1: FETCH of a two-phase result with its ticket's id and token gave the
  // whole RESULT to a connection that never authenticated (and to another
  // key's). A result is read by COLLECT with the submitter's key only.
  TempDir dir;
  E2EDaemon d(AliceAndBob(dir));
  wire::Submitted t;
  REQUIRE(Submit(d.port(), kAlice, &t).ok());
  // The result is in the store (not still being made) before it is attacked.
  REQUIRE(WaitForStat(d.port(), kAlice, "function.echo.calls", 1) == 1);
  std::string got;
  Status anon = Ask(d.port(), "", FRAME_FETCH, t.id(), t.token(), FRAME_DATA, &got);
  CHECK(anon.code() == NINF_ERR_AUTH);
  Status bob = Ask(d.port(), kBob, FRAME_FETCH, t.id(), t.token(), FRAME_DATA, &got);
  CHECK(bob.code() == NINF_ERR_INVALID_ID);
  Status alice = Ask(d.port(), kAlice, FRAME_FETCH, t.id(), t.token(), FRAME_DATA, &got);
  CHECK(alice.code() == NINF_ERR_INVALID_ID);  // not a kept array, even to its owner
  CHECK(Collect(d.port(), kBob, t, &got).code() == NINF_ERR_AUTH);
  REQUIRE(Collect(d.port(), kAlice, t, &got).ok());
  CHECK(got == Doubles(kN, 1));
}

TEST_CASE("kept_data_arrays_are_fetched_by_their_owner_only", "[e2e][kept_data]") {
  // A block's kept array (Args.keep) is read by FETCH with the block's key
  // and its token: not by a connection without a key, nor by another key.
  TempDir dir;
  E2EDaemon d(AliceAndBob(dir));
  auto ch = Connect(d.port(), kAlice);
  wire::Args args;
  args.add_keep(1);
  SendEcho(*ch, {}, args, Doubles(kN, 5));
  wire::Result result;
  FrameHeader h;
  REQUIRE(ch->RecvReply(FRAME_RESULT, 1 << 20, &result, &h).ok());
  REQUIRE(result.kept_size() == 1);
  const wire::DataRef &ref = result.kept(0);
  std::string got;
  CHECK(Ask(d.port(), "", FRAME_FETCH, ref.id(), ref.token(), FRAME_DATA, &got).code() ==
        NINF_ERR_AUTH);
  CHECK(Ask(d.port(), kBob, FRAME_FETCH, ref.id(), ref.token(), FRAME_DATA, &got).code() ==
        NINF_ERR_AUTH);
  CHECK(Ask(d.port(), kAlice, FRAME_FETCH, ref.id(), "wrong-token-0000", FRAME_DATA, &got).code() ==
        NINF_ERR_INVALID_ID);
  REQUIRE(Ask(d.port(), kAlice, FRAME_FETCH, ref.id(), ref.token(), FRAME_DATA, &got).ok());
  CHECK(got == Doubles(kN, 5));
  // Nor is an array COLLECTed as if it were a result.
  CHECK(Ask(d.port(), kAlice, FRAME_COLLECT, ref.id(), ref.token(), FRAME_RESULT, &got).code() ==
        NINF_ERR_INVALID_ID);
}

namespace {

// A transaction block of two dmmul calls, `first` then `second`, the second
// reading the first's result c where it is kept: "0" when e comes out
// right, else what failed (Ninf_get_error_detail).
std::string DmmulBlock(const std::string &first, const std::string &second) {
  const long n = 6;
  std::vector<double> a(n * n, 1.0), b(n * n, 2.0), c(n * n, 0.0), e(n * n, 0.0);
  if (Ninf_transaction_begin() != 0) return "begin";
  Ninf_call(first.c_str(), n, a.data(), b.data(), c.data());
  Ninf_call(second.c_str(), n, c.data(), b.data(), e.data());
  Ninf_transaction_discard(c.data());
  if (Ninf_transaction_end() != 0) return Ninf_get_error_detail();
  // c = 2n everywhere, e = c * b = 4n^2.
  for (double x : e)
    if (x != 4.0 * n * n) return "wrong";
  return "0";
}

}  // namespace

TEST_CASE("kept_data_forwarding_works_with_keys", "[e2e][kept_data]") {
  // A block whose intermediates stay on the server, on a daemon with keys:
  // the reading executable authenticates with the block's key (CTL_PROVE).
  TempDir dir;
  const std::string keys = WriteKeyFile(dir, "keys", kAlice);
  E2EDaemon d({"--key-file", keys});
  const std::string out =
      RunInChild(keys, [&] { return DmmulBlock(d.Name("dmmul"), d.Name("dmmul")); });
  CHECK(out == "0");
  // c stayed on the server and was read from there, then released.
  CHECK(Stat(d.port(), kAlice, "store_stored") == 1);
  CHECK(Stat(d.port(), kAlice, "store_served_bytes") == static_cast<long>(6 * 6 * sizeof(double)));
}

TEST_CASE("kept_data_reference_to_an_address_ninfd_does_not_know_is_never_dialled",
          "[e2e][kept_data]") {
  // A data reference is the client's text: a hostile client named any
  // ip:port of the server's network and the executable connected there.
  // Now ninfd answers first (server/fetch_policy.h): itself, its
  // metaserver's servers, its fetch_from; nothing else is dialled.
  const std::string token = "TOKEN-OF-THE-CALLER-42";
  PlainListener plain;
  E2EDaemon d;
  Status st = EchoFromReference(d.port(), "", "127.0.0.1:" + std::to_string(plain.port()), token);
  CHECK(st.code() == NINF_ERR_AUTH);
  CHECK_THAT(st.message(), Catch::Contains("fetch_from"));
  CHECK(plain.accepted() == 0);
  // Nor a name, nor a same-host socket that is not ninfd's.
  st = EchoFromReference(d.port(), "", "unix:/run/some.sock", token);
  CHECK(st.code() == NINF_ERR_AUTH);
  CHECK_THAT(st.message(), Catch::Contains("fetch_from"));
}

TEST_CASE("kept_data_between_two_direct_servers_needs_fetch_from", "[e2e][kept_data]") {
  // A block over two ninfds the client calls directly (no metaserver): the
  // second reads the first's intermediate only when its fetch_from names
  // it; otherwise the block fails saying so, and the first is not dialled.
  E2EDaemon first;
  auto block = [&](const E2EDaemon &second) {
    // Over TCP: the references name "127.0.0.1:PORT" (a same-host client's
    // name the first ninfd's socket, which fetch_from may list as unix:PATH).
    ::setenv("NINF_TRANSPORT", "tcp", 1);
    return DmmulBlock(first.Name("dmmul"), second.Name("dmmul"));
  };
  {
    E2EDaemon second;
    const std::string out = RunInChild("", [&] { return block(second); });
    CHECK_THAT(out, Catch::Contains("fetch_from"));
  }
  E2EDaemon second({"--fetch-from", "127.0.0.1:" + std::to_string(first.port())});
  CHECK(RunInChild("", [&] { return block(second); }) == "0");
  CHECK(Stat(first.port(), "", "store_served_bytes") == static_cast<long>(6 * 6 * sizeof(double)));
}

TEST_CASE("kept_data_reference_to_a_plain_listener_is_refused", "[e2e][kept_data]") {
  // H11: a call's data reference made the executable connect to any
  // ip:port the client named and send it the FETCH. Now the listener must
  // prove itself as a ninfd before it hears anything of the call, even at
  // an address ninfd lets its calls dial (fetch_from).
  const std::string token = "TOKEN-OF-THE-CALLER-42";
  SECTION("with keys: the exchange with the caller's key") {
    TempDir dir, other;
    PlainListener plain;
    E2EDaemon stranger({"--key-file", WriteKeyFile(other, "keys", kBob)});
    const std::string plain_at = "127.0.0.1:" + std::to_string(plain.port());
    const std::string stranger_at = "127.0.0.1:" + std::to_string(stranger.port());
    E2EDaemon d({"--key-file", WriteKeyFile(dir, "keys", kAlice), "--fetch-from",
                 plain_at + ", " + stranger_at});
    Status st = EchoFromReference(d.port(), kAlice, plain_at, token);
    CHECK(st.code() == NINF_ERR_AUTH);
    CHECK(st.message().find("not a ninfd") != std::string::npos);
    CHECK(plain.received().find(token) == std::string::npos);
    // A ninfd with another key does not pass either.
    st = EchoFromReference(d.port(), kAlice, stranger_at, token);
    CHECK(st.code() == NINF_ERR_AUTH);
    CHECK(st.message().find("not a ninfd") != std::string::npos);
  }
  SECTION("without keys: the listener must answer as a ninfd") {
    PlainListener plain;
    E2EDaemon d({"--fetch-from", "127.0.0.1:" + std::to_string(plain.port())});
    Status st = EchoFromReference(d.port(), "", "127.0.0.1:" + std::to_string(plain.port()), token);
    CHECK(st.code() == NINF_ERR_AUTH);
    CHECK(st.message().find("not a ninfd") != std::string::npos);
    CHECK(plain.accepted() == 1);
    CHECK(plain.received().find(token) == std::string::npos);
    CHECK(plain.received().size() < 64);  // one PROBE header, nothing of the call
  }
}

TEST_CASE("kept_data_raw_collect_twice_is_invalid_id", "[e2e][kept_data]") {
  // H11: a raw COLLECT succeeded twice; a result is collected once.
  E2EDaemon d;
  wire::Submitted t;
  REQUIRE(Submit(d.port(), "", &t).ok());
  std::string got;
  REQUIRE(Collect(d.port(), "", t, &got).ok());
  CHECK(got == Doubles(kN, 1));
  Status again = Collect(d.port(), "", t, &got);
  CHECK(again.code() == NINF_ERR_INVALID_ID);
  CHECK(d.Stat("store_entries") == 0);
}

TEST_CASE("kept_data_collect_after_restart_is_invalid_id", "[e2e][kept_data]") {
  // H11: a restart between submit and collect loses the result (documented
  // in docs/transactions.md): the collector hears so at once.
  wire::Submitted t;
  int port = 0;
  {
    E2EDaemon d;
    port = d.port();
    REQUIRE(Submit(port, "", &t).ok());
    REQUIRE(d.WaitForStat("function.echo.calls", 1) == 1);
  }
  E2EDaemon again({"--port", std::to_string(port)});
  std::string got;
  const auto start = std::chrono::steady_clock::now();
  Status st = Collect(again.port(), "", t, &got);
  CHECK(st.code() == NINF_ERR_INVALID_ID);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

TEST_CASE("kept_data_uncollected_results_hold_no_descriptor_each", "[e2e][kept_data]") {
  // H4: every uncollected two-phase result held a memfd in ninfd, until its
  // descriptors ran out and every call failed.
  E2EDaemon d;
  wire::Submitted t;
  REQUIRE(Submit(d.port(), "", &t).ok());  // the executable is warm now
  REQUIRE(d.WaitForStat("store_entries", 1) == 1);
  const int before = d.OpenFds();
  constexpr int kSubmissions = 300;
  for (int i = 0; i < kSubmissions; ++i) REQUIRE(Submit(d.port(), "", &t).ok());
  REQUIRE(d.WaitForStat("function.echo.calls", kSubmissions + 1) == kSubmissions + 1);
  CHECK(d.Stat("store_entries") == kSubmissions + 1);
  CHECK(d.Stat("store_descriptors") == 0);  // small results are held in memory
  CHECK(d.OpenFds() < before + 20);
  // A normal call still works, and the last result is still there.
  auto ch = Connect(d.port(), "");
  SendEcho(*ch, {}, {}, Doubles(kN, 3));
  wire::Result result;
  FrameHeader h;
  CHECK(ch->RecvReply(FRAME_RESULT, 1 << 20, &result, &h).ok());
  std::string got;
  REQUIRE(Collect(d.port(), "", t, &got).ok());
  CHECK(got == Doubles(kN, 1));
}

TEST_CASE("kept_data_per_owner_caps_refuse_one_key_only", "[e2e][kept_data]") {
  // H4: one key's uncollected results are capped (count and bytes), with
  // an error naming the cap; another key still submits.
  TempDir dir;
  E2EDaemon d(AliceAndBob(dir, {"--store-entries-per-owner", "3"}));
  wire::Submitted t;
  for (int i = 0; i < 3; ++i) REQUIRE(Submit(d.port(), kAlice, &t).ok());
  Status st = Submit(d.port(), kAlice, &t);
  CHECK(st.code() == NINF_ERR_LIMIT);
  CHECK(st.message().find("store_entries_per_owner") != std::string::npos);
  REQUIRE(Submit(d.port(), kBob, &t).ok());
  std::string got;
  REQUIRE(Collect(d.port(), kBob, t, &got).ok());
  CHECK(got == Doubles(kN, 1));
}

TEST_CASE("kept_data_per_owner_byte_cap_refuses_with_its_name", "[e2e][kept_data]") {
  TempDir dir;
  E2EDaemon d(AliceAndBob(dir, {"--store-bytes-per-owner", "3K"}));
  wire::Submitted t;
  Status st = Submit(d.port(), kAlice, &t, 4096);
  CHECK(st.code() == NINF_ERR_LIMIT);
  CHECK(st.message().find("store_bytes_per_owner") != std::string::npos);
  REQUIRE(Submit(d.port(), kAlice, &t, 2048).ok());
  REQUIRE(Submit(d.port(), kBob, &t, 2048).ok());
}
