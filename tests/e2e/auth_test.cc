// Authentication against a real ninfd (docs/security.md): a daemon with a
// key_file serves only clients that prove they hold a key, through libninf,
// function handles and ninfd --status; everything else is refused with
// NINF_ERR_AUTH before any request is served, the daemon stays healthy, a
// key is rotated with SIGHUP, and a non-loopback listener without a key is
// refused at start.
//
// libninf reads NINF_KEY_FILE once per process, so each libninf client runs
// in a child process of its own (this process never calls libninf itself).
#include "protocol/auth.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "client/grpc.h"
#include "client/ninf.h"
#include "ninf.pb.h"
#include "protocol/frame.h"
#include "protocol/wire.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/server/daemon_fixture.h"

using namespace ninf;
using ninf::test::TempDir;

namespace {

const std::string kKey = "7d1b0c8e5f2a4b6c9d0e1f2a3b4c5d6e";
const std::string kOtherKey = "a-different-key-of-enough-length";

std::string WriteKeyFile(const TempDir &dir, const std::string &name, const std::string &text) {
  std::string path = dir.Join(name);
  std::ofstream(path, std::ios::trunc) << text << "\n";
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  return path;
}

struct ChildResult {
  int code = -1;  // Ninf_call's return, then Ninf_get_error()
  std::string detail;
};

// Runs `body` (returning a Ninf code) in a child whose NINF_KEY_FILE is
// `key_file` ("" = unset); the child reports the error code and detail of
// libninf's last call.
template <typename Body>
ChildResult InChild(const std::string &key_file, Body body) {
  const std::string text = RunInChild(key_file, [&] {
    ::setenv("NINF_TIMEOUT", "20", 1);
    const int code = body();
    return std::to_string(code) + "\n" + Ninf_get_error_detail();
  });
  ChildResult r;
  const std::size_t nl = text.find('\n');
  REQUIRE(nl != std::string::npos);
  r.code = std::atoi(text.substr(0, nl).c_str());
  r.detail = text.substr(nl + 1);
  return r;
}

// One echo call: 0 when the numbers came back, else Ninf_get_error().
int EchoCall(const std::string &name) {
  double a[4] = {1, 2, 3, 4};
  if (Ninf_call(name.c_str(), 4L, a) != 0) return Ninf_get_error();
  return a[3] == 4.0 ? 0 : -2;
}

// Three calls on one GridRPC function handle (one executable kept).
int HandleCalls(const std::string &address) {
  if (grpc_initialize(nullptr) != GRPC_NO_ERROR) return -3;
  std::string host = address.substr(0, address.rfind(':'));
  std::string port = address.substr(address.rfind(':') + 1);
  grpc_function_handle_t h;
  std::string server = host + ":" + port;
  if (grpc_function_handle_init(&h, server.data(), const_cast<char *>("echo")) != GRPC_NO_ERROR)
    return Ninf_get_error();
  for (int i = 0; i < 3; ++i) {
    double a[2] = {1.0 * i, 2.0};
    if (grpc_call(&h, 2L, a) != GRPC_NO_ERROR || a[0] != 1.0 * i) return -4;
  }
  grpc_function_handle_destruct(&h);
  grpc_finalize();
  return 0;
}

// A raw connection: the tests below speak the protocol by hand.
std::unique_ptr<Channel> Raw(const E2EDaemon &d) {
  int fd = -1;
  REQUIRE(ConnectTcp("127.0.0.1", d.port(), 5000, &fd).ok());
  return std::make_unique<Channel>(fd, 10000);
}

auth::Key KeyOf(const std::string &secret) { return {secret, auth::KeyIdOf(secret)}; }

// The first half of the exchange by hand, naming the daemon's key: AUTH out,
// the CHALLENGE back. What the test sends next is up to it.
wire::Challenge BeginExchange(Channel &ch) {
  auth::Nonce cn{};
  REQUIRE(auth::MakeNonce(&cn).ok());
  wire::AuthRequest req;
  req.set_key_id(auth::KeyIdOf(kKey));
  req.set_client_nonce(cn.data(), cn.size());
  REQUIRE(ch.SendFrame(FRAME_AUTH, &req).ok());
  wire::Challenge challenge;
  FrameHeader h;
  REQUIRE(ch.RecvReply(FRAME_CHALLENGE, 0, &challenge, &h).ok());
  return challenge;
}

// The daemon's counters, asked with the key (the fixture's helper cannot).
long AuthedStat(const E2EDaemon &d, const std::string &name) {
  auto ch = Raw(d);
  REQUIRE(auth::AuthenticateToServer(*ch, KeyOf(kKey)).ok());
  wire::StatsRequest req;
  REQUIRE(ch->SendFrame(FRAME_STATS, &req).ok());
  wire::StatsReply reply;
  FrameHeader h;
  REQUIRE(ch->RecvReply(FRAME_STATS_REPLY, 0, &reply, &h).ok());
  std::string key = "\n" + name + ":";
  std::string text = "\n" + reply.text();
  std::size_t at = text.find(key);
  return at == std::string::npos ? -1 : std::atol(text.c_str() + at + key.size());
}

// Runs `ninfd ARGS...` to completion; returns its exit status and output.
int RunNinfd(const std::vector<std::string> &args, std::string *output) {
  std::string cmd = "'" + ninf::test::NinfdPath() + "'";
  for (const std::string &a : args) cmd += " '" + a + "'";
  cmd += " 2>&1";
  FILE *p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  std::size_t n;
  output->clear();
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) output->append(buf, n);
  int status = ::pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("auth_a_keyed_daemon_serves_clients_with_the_key", "[auth]") {
  TempDir dir;
  std::string key = WriteKeyFile(dir, "key", kKey);
  E2EDaemon d({"--key-file", key});

  ChildResult one_shot = InChild(key, [&] { return EchoCall(d.Name("echo")); });
  CHECK(one_shot.code == 0);
  INFO(one_shot.detail);
  ChildResult handle =
      InChild(key, [&] { return HandleCalls("127.0.0.1:" + std::to_string(d.port())); });
  CHECK(handle.code == 0);
  INFO(handle.detail);

  // ninfd --status asks with the daemon's own key.
  std::string out;
  std::string server = "127.0.0.1:" + std::to_string(d.port());
  CHECK(RunNinfd({"--status", "--server", server, "--key-file", key}, &out) == 0);
  CHECK_THAT(out, Catch::Contains("completed:"));
  CHECK(RunNinfd({"--status", "--server", server}, &out) == 1);
  CHECK_THAT(out, Catch::Contains("requires authentication"));
  // --list: every served function with its signature, with the key only.
  CHECK(RunNinfd({"--list", "--server", server, "--key-file", key}, &out) == 0);
  CHECK_THAT(out,
             Catch::Contains("dgesv(IN int n, IN int nrhs, INOUT double a[n][lda], IN int lda, "
                             "OUT int ipiv[n], INOUT double b[nrhs][ldb], IN int ldb, "
                             "OUT int *info)"));
  CHECK_THAT(out, Catch::Contains("\nnull()  Does nothing"));
  CHECK(RunNinfd({"--list", "--server", server}, &out) == 1);
  CHECK_THAT(out, Catch::Contains("cannot list the functions") &&
                      Catch::Contains("requires authentication"));
  CHECK(AuthedStat(d, "completed") >= 4);
}

TEST_CASE("auth_clients_without_the_key_are_refused_before_any_request", "[auth]") {
  TempDir dir;
  std::string key = WriteKeyFile(dir, "key", kKey);
  std::string other = WriteKeyFile(dir, "other", kOtherKey);
  E2EDaemon d({"--key-file", key});

  ChildResult none = InChild("", [&] { return EchoCall(d.Name("echo")); });
  CHECK(none.code == NINF_ERR_AUTH);
  CHECK_THAT(none.detail, Catch::Contains("requires authentication"));

  ChildResult wrong = InChild(other, [&] { return EchoCall(d.Name("echo")); });
  CHECK(wrong.code == NINF_ERR_AUTH);
  CHECK_THAT(wrong.detail, Catch::Contains("not one of ninfd's"));

  SECTION("a right key id with a forged proof") {
    auto ch = Raw(d);
    (void)BeginExchange(*ch);
    FrameHeader h;
    wire::AuthProof proof;
    proof.set_client_proof(std::string(auth::kProofSize, 'x'));
    REQUIRE(ch->SendFrame(FRAME_PROOF, &proof).ok());
    wire::QueryInterface q;  // pipelined behind the proof, as clients do
    q.set_name("echo");
    REQUIRE(ch->SendFrame(FRAME_QUERY_INTERFACE, &q).ok());
    wire::InterfaceReply reply;
    CHECK(ch->RecvReply(FRAME_INTERFACE, 0, &reply, &h).code() == NINF_ERR_AUTH);
  }
  SECTION("a server's proof replayed as the client's") {
    auto ch = Raw(d);
    wire::Challenge challenge = BeginExchange(*ch);
    FrameHeader h;
    wire::AuthProof proof;
    proof.set_client_proof(challenge.server_proof());
    REQUIRE(ch->SendFrame(FRAME_PROOF, &proof).ok());
    wire::StatsRequest stats;
    REQUIRE(ch->SendFrame(FRAME_STATS, &stats).ok());
    wire::StatsReply reply;
    CHECK(ch->RecvReply(FRAME_STATS_REPLY, 0, &reply, &h).code() == NINF_ERR_AUTH);
  }
  SECTION("a request straight away, without the exchange") {
    auto ch = Raw(d);
    wire::CallRequest call;
    call.set_name("echo");
    REQUIRE(ch->SendFrame(FRAME_CALL, &call).ok());
    wire::Result result;
    FrameHeader h;
    CHECK(ch->RecvReply(FRAME_RESULT, 0, &result, &h).code() == NINF_ERR_AUTH);
  }
  // Nothing ran, and the daemon serves a good client right after.
  CHECK(d.Children().empty());  // no executable was started for them
  CHECK(InChild(key, [&] { return EchoCall(d.Name("echo")); }).code == 0);
  CHECK(AuthedStat(d, "auth_failures") >= 3);
}

TEST_CASE("auth_an_unauthenticated_connection_gets_only_the_request_timeout", "[auth]") {
  TempDir dir;
  std::string key = WriteKeyFile(dir, "key", kKey);
  E2EDaemon d({"--key-file", key, "--request-timeout-seconds", "1"});
  auto ch = Raw(d);
  auto start = std::chrono::steady_clock::now();
  FrameHeader h;
  Status st = ch->RecvHeader(0, &h);  // the daemon closes (with an error frame or not)
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(waited < 4.0);  // the idle timeout would be 60 s
  INFO(st.ToString());
}

TEST_CASE("auth_a_client_with_a_key_refuses_a_daemon_without_one", "[auth]") {
  TempDir dir;
  std::string key = WriteKeyFile(dir, "key", kKey);
  E2EDaemon d;
  ChildResult r = InChild(key, [&] { return EchoCall(d.Name("echo")); });
  CHECK(r.code == NINF_ERR_AUTH);
  CHECK_THAT(r.detail, Catch::Contains("does not authenticate"));
  CHECK(InChild("", [&] { return EchoCall(d.Name("echo")); }).code == 0);
}

TEST_CASE("auth_keys_rotate_with_sighup", "[auth]") {
  TempDir dir;
  std::string server_keys = WriteKeyFile(dir, "server", kKey);
  std::string old_client = WriteKeyFile(dir, "old", kKey);
  std::string new_client = WriteKeyFile(dir, "new", kOtherKey);
  E2EDaemon d({"--key-file", server_keys});
  CHECK(InChild(new_client, [&] { return EchoCall(d.Name("echo")); }).code == NINF_ERR_AUTH);
  // Step 1: the daemon accepts the new key next to the old one.
  WriteKeyFile(dir, "server", kOtherKey + "\n" + kKey);
  ::kill(d.pid(), SIGHUP);
  bool both = false;
  for (int i = 0; i < 50 && !both; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    both = InChild(new_client, [&] { return EchoCall(d.Name("echo")); }).code == 0;
  }
  CHECK(both);
  CHECK(InChild(old_client, [&] { return EchoCall(d.Name("echo")); }).code == 0);
  // Step 2: once every client has the new key, the old one goes.
  WriteKeyFile(dir, "server", kOtherKey);
  ::kill(d.pid(), SIGHUP);
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    gone = InChild(old_client, [&] { return EchoCall(d.Name("echo")); }).code == NINF_ERR_AUTH;
  }
  CHECK(gone);
  CHECK(InChild(new_client, [&] { return EchoCall(d.Name("echo")); }).code == 0);
}

TEST_CASE("auth_ninfd_refuses_to_start_unsafely", "[auth]") {
  TempDir dir;
  std::string out;
  // Each a configuration it cannot start with: exit 2, which the systemd
  // unit does not restart. An address other hosts can reach, without a key:
  // refused before binding.
  CHECK(RunNinfd({"--listen", "0.0.0.0", "--port", "0"}, &out) == 2);
  CHECK_THAT(out,
             Catch::Contains("refusing to listen on 0.0.0.0") && Catch::Contains("--insecure"));
  // With a key but without TLS (issue 43): the arrays would cross the
  // network in clear; the refusal says how to make a site CA.
  std::string key = WriteKeyFile(dir, "key", kKey);
  CHECK(RunNinfd({"--listen", "0.0.0.0", "--port", "0", "--key-file", key}, &out) == 2);
  CHECK_THAT(out, Catch::Contains("refusing to serve 0.0.0.0 without TLS") &&
                      Catch::Contains("scripts/site_ca.sh") &&
                      Catch::Contains("--allow-plaintext"));
  // A key file others may read.
  std::string loose = WriteKeyFile(dir, "loose", kKey);
  REQUIRE(::chmod(loose.c_str(), 0644) == 0);
  CHECK(RunNinfd({"--key-file", loose, "--port", "0"}, &out) == 2);
  CHECK_THAT(out, Catch::Contains("chmod 600"));
  // A key too short to be one.
  std::string weak = WriteKeyFile(dir, "weak", "secret");
  CHECK(RunNinfd({"--key-file", weak, "--port", "0"}, &out) == 2);
  CHECK_THAT(out, Catch::Contains("shorter than 16"));
}
