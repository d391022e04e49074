// Black-box tests of ninfd's own requests: the real daemon on a free port,
// talked to over TCP. Every bad input is followed by a good request that
// must still succeed.
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/server/daemon_fixture.h"
#include "tests/server/fake_daemon.h"
#include "tests/server/test_client.h"

using namespace ninf;
using namespace ninf::test;
using namespace std::chrono_literals;

namespace {

// A daemon serving the fake functions "echo" and "info".
struct DaemonFixture : FakeDaemon {
  explicit DaemonFixture(std::vector<std::string> args = {})
      : FakeDaemon({"echo", "info"}, std::move(args)) {}

  // The daemon must still answer a good request.
  void RequireAlive() {
    Channel ch(daemon->Connect(), 5000);
    std::vector<std::string> names;
    Status st = ListFunctions(ch, &names);
    REQUIRE(st.ok());
    CHECK(names == std::vector<std::string>{"echo", "info"});
  }
};

// Sends `bytes`, then expects one FRAME_ERROR with `code` and the close.
void ExpectErrorAndClose(Daemon &d, const std::string &bytes, int code, bool close_after = false) {
  Channel ch(d.Connect(), 5000);
  WriteAll(ch.fd(), bytes);
  if (close_after) ::shutdown(ch.fd(), SHUT_WR);
  wire::ListReply unused;
  FrameHeader h;
  Status st = ch.RecvReply(FRAME_LIST_REPLY, 0, &unused, &h);
  CHECK(st.code() == code);
  INFO("error message: " << st.message());
  CHECK_FALSE(st.message().empty());
  CHECK(WaitClosed(ch.fd(), 5000));
}

std::string Header(uint8_t version, const char *magic, uint16_t type, uint32_t header_length) {
  std::string f(kFrameHeaderSize, '\0');
  std::copy(magic, magic + 4, f.begin());
  f[4] = static_cast<char>(version);
  f[5] = 1;
  f[6] = static_cast<char>(type & 0xff);
  f[7] = static_cast<char>(type >> 8);
  for (int i = 0; i < 4; ++i) f[8 + i] = static_cast<char>(header_length >> (8 * i));
  return f;
}

}  // namespace

TEST_CASE("daemon_query_interface", "[daemon]") {
  DaemonFixture fx;
  Channel ch(fx.daemon->Connect(), 5000);
  wire::FunctionInterface iface;
  REQUIRE(QueryInterface(ch, "echo", &iface).ok());
  CHECK(iface.name() == "echo");
  CHECK(iface.params_size() == 3);
  CHECK(iface.params(2).mode() == wire::MODE_INOUT);
  // The same connection serves further requests.
  REQUIRE(QueryInterface(ch, "info", &iface).ok());
  CHECK(iface.name() == "info");
}

TEST_CASE("daemon_query_unknown_function_keeps_connection", "[daemon]") {
  DaemonFixture fx;
  Channel ch(fx.daemon->Connect(), 5000);
  wire::FunctionInterface iface;
  Status st = QueryInterface(ch, "nope", &iface);
  CHECK(st.code() == NINF_ERR_FUNCTION_NOT_FOUND);
  CHECK_THAT(st.message(), Catch::Contains("nope"));
  std::vector<std::string> names;
  REQUIRE(ListFunctions(ch, &names).ok());
  CHECK(names.size() == 2);
}

TEST_CASE("daemon_list_and_stats", "[daemon]") {
  DaemonFixture fx(
      {"--slots", "3", "--thread-budget", "fixed", "--threads-per-job", "2", "--queue-limit", "5"});
  fx.RequireAlive();
  auto s = GetStats(*fx.daemon);
  for (const char *key : {"version", "pid", "uptime_seconds", "cores", "slots", "threads_per_job",
                          "running", "queued", "connections", "completed", "failed", "cancelled",
                          "bytes_in", "bytes_out", "load_average_1", "executables_started"})
    CHECK(s.count(key) == 1);
  CHECK(Stat(s, "pid") == fx.daemon->pid());
  CHECK(Stat(s, "slots") == 3);
  CHECK(Stat(s, "threads_per_job") == 2);
  CHECK(Stat(s, "queue_limit") == 5);
  CHECK(Stat(s, "functions") == 2);
  CHECK(Stat(s, "running") == 0);
  CHECK(Stat(s, "connections") == 1);  // the stats connection itself
  CHECK(Stat(s, "executables_started") == 0);
}

TEST_CASE("daemon_pipelined_requests_answered_in_order", "[daemon]") {
  DaemonFixture fx;
  Channel ch(fx.daemon->Connect(), 5000);
  wire::ListRequest list;
  wire::StatsRequest stats;
  wire::QueryInterface query;
  query.set_name("info");
  WriteAll(ch.fd(), FrameBytes(FRAME_LIST, &list) + FrameBytes(FRAME_STATS, &stats) +
                        FrameBytes(FRAME_QUERY_INTERFACE, &query));
  FrameHeader h;
  wire::ListReply l;
  REQUIRE(ch.RecvReply(FRAME_LIST_REPLY, 0, &l, &h).ok());
  wire::StatsReply s;
  REQUIRE(ch.RecvReply(FRAME_STATS_REPLY, 0, &s, &h).ok());
  wire::InterfaceReply i;
  REQUIRE(ch.RecvReply(FRAME_INTERFACE, 0, &i, &h).ok());
  CHECK(i.iface().name() == "info");
}

TEST_CASE("daemon_bad_input_then_good_request", "[daemon]") {
  DaemonFixture fx;
  Daemon &d = *fx.daemon;
  SECTION("garbage bytes") {
    ExpectErrorAndClose(d, "GET / HTTP/1.1\r\nHost: example\r\n\r\nmore garbage here",
                        NINF_ERR_PROTOCOL);
  }
  SECTION("wrong magic") {
    ExpectErrorAndClose(d, Header(1, "NINX", FRAME_LIST, 0), NINF_ERR_PROTOCOL);
  }
  SECTION("wrong version") {
    ExpectErrorAndClose(d, Header(2, "NINF", FRAME_LIST, 0), NINF_ERR_VERSION);
  }
  SECTION("oversized header length") {
    ExpectErrorAndClose(d, Header(1, "NINF", FRAME_QUERY_INTERFACE, 0xffffffffu),
                        NINF_ERR_PROTOCOL);
  }
  SECTION("header over the request limit") {
    ExpectErrorAndClose(d, Header(1, "NINF", FRAME_QUERY_INTERFACE, 200 * 1024), NINF_ERR_PROTOCOL);
  }
  SECTION("unknown frame type") {
    ExpectErrorAndClose(d, Header(1, "NINF", 999, 0), NINF_ERR_PROTOCOL);
  }
  SECTION("a frame type meant for the executable") {
    wire::Args args;
    ExpectErrorAndClose(d, FrameBytes(FRAME_ARGS, &args), NINF_ERR_PROTOCOL);
  }
  SECTION("a request with a payload") {
    wire::StatsRequest stats;
    ExpectErrorAndClose(d, FrameBytes(FRAME_STATS, &stats, "12345678"), NINF_ERR_PROTOCOL);
  }
  SECTION("a malformed protobuf header") {
    std::string f = Header(1, "NINF", FRAME_QUERY_INTERFACE, 4) + "\xff\xff\xff\xff";
    ExpectErrorAndClose(d, f, NINF_ERR_PROTOCOL);
  }
  SECTION("truncated frame, then half-close") {
    ExpectErrorAndClose(d, Header(1, "NINF", FRAME_LIST, 10).substr(0, 30), NINF_ERR_PROTOCOL,
                        true);
  }
  SECTION("truncated frame, then close") {
    int fd = d.Connect();
    WriteAll(fd, Header(1, "NINF", FRAME_LIST, 0).substr(0, 10));
    ::close(fd);
  }
  SECTION("connect and close at once") { ::close(d.Connect()); }
  SECTION("a call for an unknown function") {
    wire::CallRequest call;
    call.set_name("nope");
    wire::Args args;
    // The arguments pipelined behind the call must not confuse the daemon.
    ExpectErrorAndClose(d, FrameBytes(FRAME_CALL, &call) + FrameBytes(FRAME_ARGS, &args, "xyz"),
                        NINF_ERR_FUNCTION_NOT_FOUND);
  }
  fx.RequireAlive();
  auto s = GetStats(d);
  CHECK(Stat(s, "executables_started") == 0);
  CHECK(fx.daemon->Running());
}

TEST_CASE("daemon_protocol_errors_are_counted", "[daemon]") {
  DaemonFixture fx;
  ExpectErrorAndClose(*fx.daemon, Header(1, "NINX", FRAME_LIST, 0), NINF_ERR_PROTOCOL);
  ExpectErrorAndClose(*fx.daemon, Header(9, "NINF", FRAME_LIST, 0), NINF_ERR_VERSION);
  CHECK(Stat(GetStats(*fx.daemon), "protocol_errors") == 2);
}

TEST_CASE("daemon_idle_connection_is_closed", "[daemon]") {
  DaemonFixture fx({"--idle-timeout-seconds", "1"});
  Channel ch(fx.daemon->Connect(), 5000);
  auto start = std::chrono::steady_clock::now();
  wire::ListReply unused;
  FrameHeader h;
  Status st = ch.RecvReply(FRAME_LIST_REPLY, 0, &unused, &h);
  CHECK(st.code() == NINF_ERR_TIMEOUT);
  CHECK(WaitClosed(ch.fd(), 3000));
  auto waited = std::chrono::steady_clock::now() - start;
  CHECK(waited >= 900ms);
  CHECK(waited < 4s);
  fx.RequireAlive();
}

TEST_CASE("daemon_connection_limit", "[daemon]") {
  DaemonFixture fx({"--max-connections", "2"});
  Channel a(fx.daemon->Connect(), 5000);
  Channel b(fx.daemon->Connect(), 5000);
  std::vector<std::string> names;
  REQUIRE(ListFunctions(a, &names).ok());  // both are really accepted
  REQUIRE(ListFunctions(b, &names).ok());
  {
    // The third is told why and closed, without having to ask anything.
    Channel c(fx.daemon->Connect(), 5000);
    wire::ListReply unused;
    FrameHeader h;
    Status st = c.RecvReply(FRAME_LIST_REPLY, 0, &unused, &h);
    CHECK(st.code() == NINF_ERR_SERVER);
    CHECK_THAT(st.message(), Catch::Contains("too many connections: connection limit 2") &&
                                 Catch::Contains("(setting max_connections)"));
  }
  ::shutdown(a.fd(), SHUT_RDWR);
  // Once one closes, a new client gets in.
  bool admitted = false;
  for (int i = 0; i < 100 && !admitted; ++i) {
    Channel c(fx.daemon->Connect(), 5000);
    admitted = ListFunctions(c, &names).ok();
    if (!admitted) std::this_thread::sleep_for(20ms);
  }
  CHECK(admitted);
}

TEST_CASE("daemon_sigterm_exits_zero", "[daemon]") {
  DaemonFixture fx;
  Channel idle(fx.daemon->Connect(), 5000);  // an idle client does not hold it up
  fx.RequireAlive();
  CHECK(fx.daemon->Stop() == 0);
  CHECK(WaitClosed(idle.fd(), 1000));
}

TEST_CASE("daemon_sigint_exits_zero", "[daemon]") {
  DaemonFixture fx;
  fx.daemon->Signal(SIGINT);
  for (int i = 0; i < 500 && fx.daemon->Running(); ++i) std::this_thread::sleep_for(10ms);
  CHECK(fx.daemon->Stop() == 0);
}

TEST_CASE("daemon_sighup_reloads_registry", "[daemon]") {
  DaemonFixture fx;
  MakeFakeRegistry(fx.registry, {"added"});
  fx.daemon->Signal(SIGHUP);
  bool found = false;
  for (int i = 0; i < 200 && !found; ++i) {
    Channel ch(fx.daemon->Connect(), 5000);
    wire::FunctionInterface iface;
    found = QueryInterface(ch, "added", &iface).ok();
    if (!found) std::this_thread::sleep_for(10ms);
  }
  CHECK(found);
}

namespace {

std::string ReadText(const std::string &path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t Count(const std::string &text, const std::string &what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

// Two registry folders at once (issue 31: the standard library and a
// site's): a function of each is served, the later folder wins a shared
// name, and the log says which folder won, at start and on every SIGHUP,
// which reads both folders again.
TEST_CASE("daemon_serves_two_registries_composed", "[daemon][registry]") {
  TempDir base, site, logs;
  MakeFakeRegistry(base, {"echo", "info"});
  MakeFakeRegistry(site, {"echo", "mine"});
  std::string text = FakeInterface("echo");
  text.replace(text.find("test executable"), std::string("test executable").size(),
               "the site's echo");
  site.WriteFile("echo.interface", text);
  const std::string log = logs.Join("ninfd.log");
  {
    Daemon d({"--registry", base.path(), "--registry", site.path()}, {}, log);
    Channel ch(d.Connect(), 5000);
    std::vector<std::string> names;
    REQUIRE(ListFunctions(ch, &names).ok());
    CHECK(names == std::vector<std::string>{"echo", "info", "mine"});
    wire::FunctionInterface iface;
    REQUIRE(QueryInterface(ch, "echo", &iface).ok());
    CHECK(iface.description() == "the site's echo");
    REQUIRE(QueryInterface(ch, "info", &iface).ok());
    CHECK(iface.description() == "test executable");
    // Each folder's executables run.
    std::string result;
    CHECK(CallFake(d, "mine", 1, 0, DoublePayload(3), &result).ok());
    CHECK(result == DoublePayload(3));
    CHECK(CallFake(d, "echo", 2, 0, DoublePayload(2), &result).ok());
    CHECK(result == DoublePayload(2));
    REQUIRE(CallFake(d, "info", 3, 0, DoublePayload(1), &result).ok());
    CHECK_THAT(result, Catch::Contains(" pid="));

    // SIGHUP reads both folders again: a new function in the first one is
    // served, and the override is logged again.
    MakeFakeRegistry(base, {"added"});
    d.Signal(SIGHUP);
    bool found = false;
    for (int i = 0; i < 200 && !found; ++i) {
      Channel again(d.Connect(), 5000);
      found = QueryInterface(again, "added", &iface).ok();
      if (!found) std::this_thread::sleep_for(10ms);
    }
    CHECK(found);
    Channel after(d.Connect(), 5000);
    REQUIRE(QueryInterface(after, "echo", &iface).ok());
    CHECK(iface.description() == "the site's echo");
    CHECK(d.WaitNoZombies());  // SIGHUP killed the idle warm executables
    CHECK(d.Stop() == 0);
  }
  const std::string logged = ReadText(log);
  const std::string line =
      "event=registry_override function=echo folder=" + site.path() + " replaces=" + base.path();
  INFO(logged);
  CHECK(Count(logged, line) == 2);
  CHECK(Count(logged, "event=registry_override") == 2);  // "info" and "mine" are not shared
  CHECK(Count(logged, "event=registry_without_stdlib") == 1);

  // NINF_REGISTRY separates the folders with ':'; the flag wins over it.
  {
    Daemon d({}, {"NINF_REGISTRY=" + base.path() + ":" + site.path()});
    Channel ch(d.Connect(), 5000);
    std::vector<std::string> names;
    REQUIRE(ListFunctions(ch, &names).ok());
    CHECK(names == std::vector<std::string>{"added", "echo", "info", "mine"});
    CHECK(d.Stop() == 0);
  }
  {
    Daemon d({"--registry", site.path()}, {"NINF_REGISTRY=" + base.path()});
    Channel ch(d.Connect(), 5000);
    std::vector<std::string> names;
    REQUIRE(ListFunctions(ch, &names).ok());
    CHECK(names == std::vector<std::string>{"echo", "mine"});
    CHECK(d.Stop() == 0);
  }
  // One missing folder, or one named twice, and ninfd does not start; the
  // log says why.
  const std::string refused = logs.Join("refused.log");
  CHECK_THROWS(Daemon({"--registry", base.path(), "--registry", site.Join("nope")}, {}, refused));
  CHECK_THAT(ReadText(refused),
             Catch::Contains("cannot read registry folder") && Catch::Contains("nope"));
  CHECK_THROWS(
      Daemon({"--registry", site.path() + ":" + base.path() + ":" + site.path()}, {}, refused));
  CHECK_THAT(ReadText(refused), Catch::Contains("is listed twice"));
}

TEST_CASE("daemon_refuses_bad_settings", "[daemon]") {
  TempDir dir;
  CHECK_THROWS(Daemon({"--registry", dir.Join("missing")}));
  CHECK_THROWS(Daemon({"--slots", "-3"}));
}

TEST_CASE("daemon_status_tool", "[daemon]") {
  DaemonFixture fx;
  std::string cmd = NinfdPath() + " --status --server " + fx.daemon->address();
  FILE *p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  CHECK(::pclose(p) == 0);
  CHECK_THAT(out, Catch::Contains("pid:" + std::to_string(fx.daemon->pid()) + "\n"));
  CHECK_THAT(out, Catch::Contains("slots:"));

  // Nothing listening: exit status 1 and a message that says so.
  int port = fx.daemon->port();
  REQUIRE(fx.daemon->Stop() == 0);
  cmd = NinfdPath() + " --status --port " + std::to_string(port) + " 2>&1";
  p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  out.clear();
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int rc = ::pclose(p);
  CHECK(WEXITSTATUS(rc) == 1);
  CHECK_THAT(out, Catch::Contains("cannot"));
}
