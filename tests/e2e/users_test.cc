// Users against a real ninfd (docs/security.md#users): several users with
// keys of their own, allow lists by name and group, per-user quotas (slots,
// queue, stored bytes), results owned by the user whatever key it proves,
// user= on the log lines, the per-user stats and their bounded metrics
// labels, --status per user, and a user revoked by SIGHUP while its
// function handle is open.
//
// Requests are raw frames (protocol/wire.h) on connections authenticated
// with a chosen key; the handle test runs libninf in a child process, which
// reads NINF_KEY_FILE once per process.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "client/grpc.h"
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

const std::string kAlice1 = "alice-first-key-0123456789abcdef";
const std::string kAlice2 = "alice-second-key-0123456789abcde";
const std::string kBob = "bob-only-key-0123456789abcdefgh";
const std::string kCarol = "carol-only-key-0123456789abcdef";
constexpr long kN = 8;  // doubles in echo's array

// A raw connection, authenticated with `key`.
std::unique_ptr<Channel> Connect(int port, const std::string &key) {
  int fd = -1;
  REQUIRE(ConnectTcp("127.0.0.1", port, 5000, &fd).ok());
  auto ch = std::make_unique<Channel>(fd, 20000);
  REQUIRE(auth::AuthenticateToServer(*ch, {key, auth::KeyIdOf(key)}).ok());
  return ch;
}

std::string Doubles(long n, double first) {
  std::string out(static_cast<std::size_t>(n) * sizeof(double), '\0');
  for (long i = 0; i < n; ++i) {
    const double v = first + static_cast<double>(i);
    std::memcpy(out.data() + i * sizeof v, &v, sizeof v);
  }
  return out;
}

// CALL `name` + ARGS with `scalars` (longs) and `payload`.
void SendCall(Channel &ch, const std::string &name, wire::CallRequest call,
              std::vector<long> scalars, const std::string &payload) {
  call.set_name(name);
  call.set_call_id(7);
  wire::Args args;
  for (long v : scalars) args.add_scalars()->set_i(v);
  iovec v{const_cast<char *>(payload.data()), payload.size()};
  REQUIRE(ch.SendFrame(FRAME_CALL, &call).ok());
  REQUIRE(
      ch.SendFrame(FRAME_ARGS, &args, std::span<const iovec>(&v, payload.empty() ? 0 : 1)).ok());
}

// A whole one-shot call: its result's status.
Status Call(int port, const std::string &key, const std::string &name, std::vector<long> scalars,
            const std::string &payload) {
  auto ch = Connect(port, key);
  SendCall(*ch, name, {}, std::move(scalars), payload);
  wire::Result result;
  FrameHeader h;
  for (;;) {  // heartbeats until the result
    Status st = ch->RecvReply(FRAME_RESULT, uint64_t{1} << 30, &result, &h);
    if (st.ok() || h.type != FRAME_HEARTBEAT) return st;
  }
}

Status Echo(int port, const std::string &key) {
  return Call(port, key, "echo", {kN}, Doubles(kN, 1));
}

// A two-phase echo(kN) submitted with `key`, reserving `keep_bytes`.
Status Submit(int port, const std::string &key, wire::Submitted *ticket,
              uint64_t keep_bytes = 4096) {
  auto ch = Connect(port, key);
  wire::CallRequest call;
  call.set_submit(true);
  call.set_keep_bytes(keep_bytes);
  SendCall(*ch, "echo", call, {kN}, Doubles(kN, 1));
  FrameHeader h;
  return ch->RecvReply(FRAME_SUBMITTED, 0, ticket, &h);
}

// COLLECT or RELEASE of a ticket with `key` (COLLECT waits while it runs).
Status Ask(int port, const std::string &key, FrameType type, const wire::Submitted &t,
           FrameType expected) {
  for (int i = 0; i < 200; ++i) {
    auto ch = Connect(port, key);
    wire::StoreKey k;
    k.set_id(t.id());
    k.set_token(t.token());
    REQUIRE(ch->SendFrame(type, &k).ok());
    FrameHeader h;
    wire::Result any;
    Status st = ch->RecvReply(expected, uint64_t{1} << 30, &any, &h);
    if (st.code() != NINF_ERR_NOT_READY) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Status(NINF_ERR_TIMEOUT, "still running");
}

std::string StatsText(int port, const std::string &key) {
  auto ch = Connect(port, key);
  wire::StatsRequest req;
  REQUIRE(ch->SendFrame(FRAME_STATS, &req).ok());
  wire::StatsReply reply;
  FrameHeader h;
  REQUIRE(ch->RecvReply(FRAME_STATS_REPLY, 0, &reply, &h).ok());
  return "\n" + reply.text();
}

// A line of the stats (-1 when absent).
long Stat(int port, const std::string &key, const std::string &name) {
  const std::string text = StatsText(port, key), line = "\n" + name + ":";
  const std::size_t at = text.find(line);
  return at == std::string::npos ? -1 : std::atol(text.c_str() + at + line.size());
}

// Waits up to 10 s until Stat(...) == `want`; returns the last value.
long WaitForStat(int port, const std::string &key, const std::string &name, long want) {
  long v = -1;
  for (int i = 0; i < 200 && (v = Stat(port, key, name)) != want; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return v;
}

std::string ReadFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Lines of the log file that contain every one of `words`.
int LogLines(const std::string &log, std::vector<std::string> words) {
  std::istringstream in(ReadFile(log));
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    bool all = true;
    for (const std::string &w : words) all = all && line.find(w) != std::string::npos;
    n += all;
  }
  return n;
}

int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) == 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

// GET /metrics from 127.0.0.1:port: the body.
std::string Metrics(int port) {
  int fd = -1;
  REQUIRE(ConnectTcp("127.0.0.1", port, 5000, &fd).ok());
  const std::string req = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  REQUIRE(::write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size()));
  std::string out;
  char buf[65536];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}

// What `command` prints.
std::string Run(const std::string &command) {
  std::string out;
  FILE *p = ::popen(command.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  ::pclose(p);
  return out;
}

// The daemon of most cases: alice (two keys, quotas), bob (group chem, an
// operator: the cases read every user's STATS lines with his key), carol;
// echo for alice only, dmmul for group chem, the rest for all; two users
// with a metrics label of their own.
std::vector<std::string> ThreeUsers(const TempDir &dir, int metrics_port) {
  std::vector<std::string> args =
      UsersConfig(dir,
                  {{"alice", kAlice1 + "\n" + kAlice2,
                    "max_slots = 1\nmax_queued = 1\nstore_bytes = \"3K\"\nmax_two_phase = 2"},
                   {"bob", kBob, "groups = [\"chem\"]\nrole = \"operator\""},
                   {"carol", kCarol, ""}},
                  "[limits.echo]\nallow = [\"alice\"]\n[limits.dmmul]\nallow = [\"group:chem\"]\n",
                  "slots = 4\nthread_budget = \"split\"\nuser_metric_labels = 2\nliveness_seconds "
                  "= 1\ngrace_seconds = 0\n"
                  "metrics = \"" +
                      std::to_string(metrics_port) + "\"\n");
  return args;
}

}  // namespace

TEST_CASE("users_allow_lists_by_name_and_group", "[e2e][users]") {
  TempDir dir;
  const std::string log = dir.Join("ninfd.log");
  E2EDaemon d(ThreeUsers(dir, FreePort()), log);
  CHECK(Echo(d.port(), kAlice1).ok());
  CHECK(Echo(d.port(), kAlice2).ok());  // her other key: the same user
  Status bob = Echo(d.port(), kBob);
  CHECK(bob.code() == NINF_ERR_DENIED);
  CHECK_THAT(bob.message(), Catch::Contains("'bob'") && Catch::Contains("'echo'"));
  // dmmul: group chem, which bob is in and alice is not.
  const std::string m = Doubles(4, 1);
  CHECK(Call(d.port(), kBob, "dmmul", {2}, m + m).ok());
  Status alice = Call(d.port(), kAlice1, "dmmul", {2}, m + m);
  CHECK(alice.code() == NINF_ERR_DENIED);
  CHECK_THAT(alice.message(), Catch::Contains("'alice'") && Catch::Contains("'dmmul'"));
  // No list: every user.
  CHECK(Call(d.port(), kCarol, "null", {}, "").ok());

  // A call is counted when its executable reports it, just after the
  // client has its result.
  CHECK(WaitForStat(d.port(), kBob, "user.alice.completed", 2) == 2);
  CHECK(Stat(d.port(), kBob, "denied") == 2);
  CHECK(Stat(d.port(), kBob, "user.alice.denied") == 1);
  CHECK(Stat(d.port(), kBob, "user.bob.denied") == 1);
  CHECK(LogLines(log, {"event=call_denied", "user=bob", "function=echo"}) == 1);
  CHECK(LogLines(log, {"event=call_done", "function=echo", "user=alice"}) == 2);
  CHECK(LogLines(log, {"event=call_start", "function=dmmul", "user=bob"}) == 1);
}

TEST_CASE("users_slot_and_queue_quotas", "[e2e][users]") {
  TempDir dir;
  const std::string log = dir.Join("ninfd.log");
  E2EDaemon d(ThreeUsers(dir, FreePort()), log);
  double unused = 0;
  (void)unused;
  // Alice's quota is one slot and one waiting call; the server has four.
  auto first = Connect(d.port(), kAlice1);
  SendCall(*first, "ep", {}, {40}, "");  // hours of work: it holds its slot
  REQUIRE(WaitForStat(d.port(), kBob, "user.alice.running", 1) == 1);
  auto second = Connect(d.port(), kAlice2);
  SendCall(*second, "ep", {}, {40}, "");
  CHECK(WaitForStat(d.port(), kBob, "user.alice.queued", 1) == 1);
  CHECK(Stat(d.port(), kBob, "running") == 1);  // three slots free, and still she waits
  // A third call would wait past max_queued: refused, naming the quota.
  Status third = Call(d.port(), kAlice1, "ep", {1}, "");
  CHECK(third.code() == NINF_ERR_LIMIT);
  CHECK_THAT(third.message(), Catch::Contains("max_queued") && Catch::Contains("alice"));
  // The count it was refused for, and the quota (before: "0 calls waiting"
  // when the waiting call was still arriving).
  CHECK_THAT(third.message(), Catch::Contains("max_queued = 1") &&
                                  Catch::Contains("1 waiting for a slot, 0 arriving"));
  // Other users are not held back by alice's waiting call.
  CHECK(Call(d.port(), kCarol, "ep", {10}, "").ok());
  CHECK(LogLines(log, {"event=call_queued", "function=ep", "user=alice"}) == 1);
  CHECK(LogLines(log, {"event=call_end", "user=alice", "outcome=rejected"}) == 1);
  // Her first call gone, the waiting one runs.
  first.reset();
  CHECK(WaitForStat(d.port(), kBob, "user.alice.queued", 0) == 0);
  CHECK(WaitForStat(d.port(), kBob, "user.alice.running", 1) == 1);
  second.reset();
  CHECK(WaitForStat(d.port(), kBob, "running", 0) == 0);
}

TEST_CASE("users_queue_quota_counts_calls_still_arriving_and_says_so", "[e2e][users]") {
  TempDir dir;
  E2EDaemon d(ThreeUsers(dir, FreePort()));
  // Alice's one slot is held; her second call sends its CALL and one byte
  // of its arguments: admitted after arrival, it is arriving, not queued.
  auto first = Connect(d.port(), kAlice1);
  SendCall(*first, "ep", {}, {40}, "");
  REQUIRE(WaitForStat(d.port(), kBob, "user.alice.running", 1) == 1);
  auto second = Connect(d.port(), kAlice2);
  wire::CallRequest call;
  call.set_name("echo");
  call.set_call_id(8);
  REQUIRE(second->SendFrame(FRAME_CALL, &call).ok());
  REQUIRE(::send(second->fd(), "N", 1, MSG_NOSIGNAL) == 1);
  REQUIRE(WaitForStat(d.port(), kBob, "arriving", 1) == 1);
  // Her third is refused for the arriving one, and the message counts it
  // (before: "alice has 0 calls waiting for a slot already").
  Status third = Call(d.port(), kAlice1, "ep", {1}, "");
  CHECK(third.code() == NINF_ERR_LIMIT);
  CHECK_THAT(third.message(), Catch::Contains("max_queued = 1") &&
                                  Catch::Contains("0 waiting for a slot, 1 arriving"));
}

TEST_CASE("users_own_their_results_and_store_quota", "[e2e][users]") {
  TempDir dir;
  E2EDaemon d(ThreeUsers(dir, FreePort()));
  // alice's store_bytes = 3K: a result reserving 4 KiB is refused.
  wire::Submitted t;
  Status big = Submit(d.port(), kAlice1, &t, 4096);
  CHECK(big.code() == NINF_ERR_LIMIT);
  CHECK_THAT(big.message(), Catch::Contains("store_bytes"));
  REQUIRE(Submit(d.port(), kAlice1, &t, 2048).ok());
  // Reserved (2048) until the result is in, then its size.
  const long kept = Stat(d.port(), kBob, "user.alice.store_bytes");
  CHECK(kept > 0);
  CHECK(kept <= 2048);
  // Bob holds the ticket and cannot collect nor release it.
  CHECK(Ask(d.port(), kBob, FRAME_COLLECT, t, FRAME_RESULT).code() == NINF_ERR_AUTH);
  CHECK(Ask(d.port(), kBob, FRAME_RELEASE, t, FRAME_RELEASED).code() == NINF_ERR_AUTH);
  // Alice collects with her other key (a key being rotated).
  CHECK(Ask(d.port(), kAlice2, FRAME_COLLECT, t, FRAME_RESULT).ok());
  CHECK(Stat(d.port(), kBob, "user.alice.store_bytes") == 0);
  // max_two_phase = 2: a third uncollected result is refused.
  wire::Submitted a, b, c;
  REQUIRE(Submit(d.port(), kAlice1, &a, 1024).ok());
  REQUIRE(Submit(d.port(), kAlice1, &b, 1024).ok());
  Status third = Submit(d.port(), kAlice1, &c, 512);
  CHECK(third.code() == NINF_ERR_LIMIT);
  CHECK_THAT(third.message(), Catch::Contains("max_two_phase"));
  CHECK(Ask(d.port(), kAlice2, FRAME_RELEASE, a, FRAME_RELEASED).ok());
  CHECK(Submit(d.port(), kAlice1, &c, 512).ok());
}

TEST_CASE("users_metrics_labels_are_bounded_and_status_per_user", "[e2e][users]") {
  TempDir dir;
  const int metrics_port = FreePort();
  E2EDaemon d(ThreeUsers(dir, metrics_port));
  CHECK(Echo(d.port(), kAlice1).ok());
  CHECK(Call(d.port(), kBob, "null", {}, "").ok());
  CHECK(Call(d.port(), kCarol, "null", {}, "").ok());  // the third user: "other"
  CHECK(Call(d.port(), kCarol, "null", {}, "").ok());
  // Counted when the executables report them, just after the results.
  CHECK(WaitForStat(d.port(), kBob, "user.other.calls", 2) == 2);
  CHECK(WaitForStat(d.port(), kBob, "user.alice.calls", 1) == 1);
  CHECK(WaitForStat(d.port(), kBob, "user.bob.calls", 1) == 1);
  const std::string metrics = Metrics(metrics_port);
  CHECK_THAT(metrics,
             Catch::Contains("ninf_user_calls_total{user=\"alice\",outcome=\"completed\"} 1"));
  CHECK_THAT(metrics,
             Catch::Contains("ninf_user_calls_total{user=\"bob\",outcome=\"completed\"} 1"));
  CHECK_THAT(metrics,
             Catch::Contains("ninf_user_calls_total{user=\"other\",outcome=\"completed\"} 2"));
  CHECK_THAT(metrics, !Catch::Contains("carol"));
  // ninfd --status with a user's key file: bob, an operator, sees every
  // user's lines; alice only her own, carol only the "other" bucket she is
  // counted in (the global and per-function lines are everyone's).
  auto status_with = [&](const std::string &user) {
    return Run(std::string(std::getenv("NINFD")) + " --status --server 127.0.0.1:" +
               std::to_string(d.port()) + " --key-file " + dir.Join(user + ".key") + " 2>&1");
  };
  const std::string all = status_with("bob");
  CHECK_THAT(all, Catch::Contains("user.alice.calls:1"));
  CHECK_THAT(all, Catch::Contains("user.alice.running:0"));
  CHECK_THAT(all, Catch::Contains("user.alice.queued:0"));
  CHECK_THAT(all, Catch::Contains("user.alice.store_bytes:0"));
  CHECK_THAT(all, Catch::Contains("user.bob.calls:1"));
  CHECK_THAT(all, Catch::Contains("user.other.calls:2"));
  CHECK_THAT(all, !Catch::Contains("carol"));
  const std::string alice = status_with("alice");
  CHECK_THAT(alice, Catch::Contains("user.alice.calls:1"));
  CHECK_THAT(alice, Catch::Contains("function.null.calls:3"));
  CHECK_THAT(alice, !Catch::Contains("user.bob.") && !Catch::Contains("user.other."));
  const std::string carol = status_with("carol");
  CHECK_THAT(carol, Catch::Contains("user.other.calls:2"));
  CHECK_THAT(carol, !Catch::Contains("user.alice.") && !Catch::Contains("user.bob."));
}

TEST_CASE("users_revoked_mid_handle", "[e2e][users]") {
  TempDir dir;
  const std::string log = dir.Join("ninfd.log");
  const std::vector<TestUser> both = {{"alice", kAlice1, ""}, {"bob", kBob, ""}};
  E2EDaemon d(UsersConfig(dir, both), log);
  const std::string alice_key = dir.Join("alice.key");

  // Alice's handle, in a child: one call, then (once told) another.
  int up[2], go[2];
  REQUIRE(::pipe(up) == 0);
  REQUIRE(::pipe(go) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setenv("NINF_KEY_FILE", alice_key.c_str(), 1);
    ::setenv("NINF_TIMEOUT", "20", 1);
    std::string report = "init";
    grpc_function_handle_t h;
    std::string server = "127.0.0.1:" + std::to_string(d.port());
    if (grpc_initialize(nullptr) == GRPC_NO_ERROR &&
        grpc_function_handle_init(&h, server.data(), const_cast<char *>("echo")) == GRPC_NO_ERROR) {
      double a[2] = {1, 2};
      report = grpc_call(&h, 2L, a) == GRPC_NO_ERROR ? "ok" : "first failed";
      (void)!::write(up[1], "1", 1);
      char c;
      (void)!::read(go[0], &c, 1);
      if (grpc_call(&h, 2L, a) == GRPC_NO_ERROR)
        report += "\nsecond succeeded";
      else
        report += "\n" + std::to_string(Ninf_get_error()) + "\n" + Ninf_get_error_detail();
    }
    (void)!::write(up[1], report.data(), report.size());
    ::_exit(0);
  }
  ::close(up[1]);
  ::close(go[0]);
  char c = 0;
  REQUIRE(::read(up[0], &c, 1) == 1);
  CHECK(Stat(d.port(), kBob, "persistent_executables") == 1);

  // The config without alice, and SIGHUP.
  UsersConfig(dir, {{"bob", kBob, ""}});
  const int reloads = LogLines(log, {"event=reloaded"});
  REQUIRE(::kill(d.pid(), SIGHUP) == 0);
  for (int i = 0; i < 200 && LogLines(log, {"event=reloaded"}) == reloads; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(LogLines(log, {"event=reloaded"}) > reloads);

  // Her new connections are refused at the handshake.
  int fd = -1;
  REQUIRE(ConnectTcp("127.0.0.1", d.port(), 5000, &fd).ok());
  Channel ch(fd, 10000);
  CHECK(auth::AuthenticateToServer(ch, {kAlice1, auth::KeyIdOf(kAlice1)}).code() == NINF_ERR_AUTH);

  // Her open handle's next call is refused, with a reason.
  REQUIRE(::write(go[1], "g", 1) == 1);
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = ::read(up[0], buf, sizeof buf)) > 0;)
    report.append(buf, static_cast<std::size_t>(n));
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  ::close(up[0]);
  ::close(go[1]);
  CHECK_THAT(report, Catch::StartsWith("ok\n" + std::to_string(NINF_ERR_AUTH) + "\n"));
  CHECK_THAT(report, Catch::Contains("revoked"));
  CHECK(LogLines(log, {"event=call_denied", "user=alice", "persistent=1"}) == 1);
  // Nothing of hers stays: her executable is gone, bob is served.
  CHECK(WaitForStat(d.port(), kBob, "persistent_executables", 0) == 0);
  CHECK(WaitForStat(d.port(), kBob, "jobs", 0) == 0);
  CHECK(Echo(d.port(), kBob).ok());
}

TEST_CASE("users_bad_tables_stop_the_start_and_keep_the_users_on_reload", "[e2e][users]") {
  TempDir dir;
  const std::string log = dir.Join("ninfd.log");
  E2EDaemon d(UsersConfig(dir, {{"alice", kAlice1, ""}, {"bob", kBob, ""}}), log);
  // A reload whose key file is unreadable keeps every user.
  UsersConfig(dir, {{"alice", kAlice1, ""}, {"bob", kBob, ""}},
              "[users.dave]\nkey_file = \"" + dir.Join("missing.key") + "\"\n");
  REQUIRE(::kill(d.pid(), SIGHUP) == 0);
  for (int i = 0; i < 200 && LogLines(log, {"event=reload_failed"}) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(LogLines(log, {"event=reload_failed", "users.dave"}) == 1);
  CHECK(Echo(d.port(), kAlice1).ok());
  CHECK(Echo(d.port(), kBob).ok());

  // At start, each mistake stops ninfd with a message naming the table.
  const std::string ninfd = std::getenv("NINFD");
  auto start = [&](const std::string &toml) {
    const std::string path = dir.Join("bad.toml");
    std::ofstream(path, std::ios::trunc) << toml;
    return Run("timeout 10 " + ninfd + " --port 0 --config " + path + " 2>&1");
  };
  CHECK_THAT(start("[users.eve]\ngroups = [\"x\"]\n"),
             Catch::Contains("users.eve") && Catch::Contains("key_file or a cert_subject"));
  CHECK_THAT(start("[users.eve]\nkey_file = \"/x\"\ncolour = 1\n"),
             Catch::Contains("unknown key users.eve.colour"));
  CHECK_THAT(start("[users.eve]\nkey_file = \"" + dir.Join("missing.key") + "\"\n"),
             Catch::Contains("users.eve"));
  CHECK_THAT(start("[users.eve]\nkey_file = \"" + dir.Join("alice.key") +
                   "\"\n[users.mallory]\nkey_file = \"" + dir.Join("alice.key") + "\"\n"),
             Catch::Contains("users.mallory") && Catch::Contains("'eve'"));
  CHECK_THAT(start("[limits.echo]\nallow = [\"has space\"]\n"),
             Catch::Contains("limits.echo.allow"));
}

TEST_CASE("users_run_as_a_local_account", "[e2e][users]") {
  if (::geteuid() != 0) {
    WARN("run_as needs ninfd to run as root: not tested as uid " << ::geteuid());
    return;
  }
  // A local account for the test, made here if it is not there yet.
  const std::string account = "ninf-runas-test";
  const bool made = std::system(("id -u " + account + " >/dev/null 2>&1").c_str()) != 0;
  if (made)
    REQUIRE(std::system(("useradd --system --no-create-home --shell /usr/sbin/nologin " + account)
                            .c_str()) == 0);
  const uid_t uid = static_cast<uid_t>(std::atol(Run("id -u " + account).c_str()));
  REQUIRE(uid != 0);
  {
    TempDir dir;
    E2EDaemon d(UsersConfig(dir,
                            {{"alice", kAlice1, "run_as = \"" + account + "\""}, {"bob", kBob, ""}},
                            "", "thread_budget = \"split\"\nslots = 4\nliveness_seconds = 1\n"));
    // Her calls run as the account, and work.
    CHECK(Call(d.port(), kAlice1, "ep", {10}, "").ok());
    CHECK(Echo(d.port(), kAlice1).ok());
    // While one runs, its executable's uid is the account's; bob's is root.
    auto hers = Connect(d.port(), kAlice1);
    SendCall(*hers, "ep", {}, {40}, "");
    auto his = Connect(d.port(), kBob);
    SendCall(*his, "ep", {}, {40}, "");
    REQUIRE(WaitForStat(d.port(), kBob, "running", 2) == 2);
    auto uid_of = [](pid_t pid) {
      std::ifstream in("/proc/" + std::to_string(pid) + "/status");
      for (std::string line; std::getline(in, line);)
        if (line.rfind("Uid:", 0) == 0) return static_cast<uid_t>(std::atol(line.c_str() + 4));
      return static_cast<uid_t>(-1);
    };
    int as_account = 0, as_root = 0;
    for (pid_t pid : d.Children()) {
      as_account += uid_of(pid) == uid;
      as_root += uid_of(pid) == 0;
    }
    CHECK(as_account == 1);
    CHECK(as_root >= 1);  // bob's (and the warm pool's)
    hers.reset();
    his.reset();
    CHECK(WaitForStat(d.port(), kBob, "running", 0) == 0);
    // An account that does not exist stops the start, naming the table.
    const std::string path = dir.Join("bad.toml");
    std::ofstream(path, std::ios::trunc) << "[users.eve]\nkey_file = \"" << dir.Join("alice.key")
                                         << "\"\nrun_as = \"no-such-account-here\"\n";
    CHECK_THAT(Run("timeout 10 " + std::string(std::getenv("NINFD")) + " --port 0 --config " +
                   path + " 2>&1"),
               Catch::Contains("users.eve") && Catch::Contains("no such local account"));
  }
  if (made) CHECK(std::system(("userdel " + account).c_str()) == 0);
}

TEST_CASE("users_block_data_fetched_with_the_users_key", "[e2e][users]") {
  // A transaction block's intermediate stays on the server, owned by alice;
  // the reading executable fetches it with the key alice's client proved
  // (CTL_PROVE), here the second key of her file.
  TempDir dir;
  E2EDaemon d(UsersConfig(
      dir, {{"alice", kAlice1 + "\n" + kAlice2, ""}, {"bob", kBob, "role = \"operator\""}}));
  const std::string second = dir.Join("second.key");
  std::ofstream(second, std::ios::trunc) << kAlice2 << "\n";
  REQUIRE(::chmod(second.c_str(), 0600) == 0);
  const std::string out = RunInChild(second, [&] {
    const long n = 6;
    std::vector<double> a(n * n, 1.0), b(n * n, 2.0), c(n * n, 0.0), e(n * n, 0.0);
    if (Ninf_transaction_begin() != 0) return std::string("begin");
    Ninf_call(d.Name("dmmul").c_str(), n, a.data(), b.data(), c.data());
    Ninf_call(d.Name("dmmul").c_str(), n, c.data(), b.data(), e.data());
    Ninf_transaction_discard(c.data());
    if (Ninf_transaction_end() != 0) return std::string(Ninf_get_error_detail());
    for (double x : e)
      if (x != 4.0 * n * n) return std::string("wrong");
    return std::string("0");
  });
  CHECK(out == "0");
  CHECK(Stat(d.port(), kBob, "store_stored") == 1);
  CHECK(Stat(d.port(), kBob, "store_served_bytes") == static_cast<long>(6 * 6 * sizeof(double)));
  CHECK(WaitForStat(d.port(), kBob, "user.alice.calls", 2) == 2);
}
