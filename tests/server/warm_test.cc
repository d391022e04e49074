// Black-box tests of warm executables: after a function's first call ninfd
// keeps one started executable of it (the default), and later calls are
// handed to it instead of starting one. The fake "info" executable tells its
// pid and how long it waited for its hand-off, which shows from outside that
// the executable was started before the call.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <thread>

#include "tests/server/daemon_fixture.h"
#include "tests/server/fake_daemon.h"
#include "tests/server/test_client.h"

using namespace ninf;
using namespace ninf::test;
using namespace std::chrono_literals;

namespace {

struct WarmFixture : FakeDaemon {
  explicit WarmFixture(std::vector<std::string> args = {})
      : FakeDaemon({"echo", "info", "crash", "diestart"}, std::move(args)) {}
};

Status WarmCall(const Daemon &d, const std::string &name, uint64_t call_id, int64_t ms,
                const std::string &payload, std::string *result, bool persistent = false) {
  return CallFake(d, name, call_id, ms, payload, result, persistent);
}

// The pid and hand-off wait that the fake "info" executable reports.
struct Info {
  pid_t pid = 0;
  long waited_ms = 0;
};

Info CallInfo(const Daemon &d, uint64_t call_id) {
  std::string text;
  Status st = WarmCall(d, "info", call_id, 0, DoublePayload(1), &text);
  REQUIRE(st.ok());
  return {static_cast<pid_t>(std::stol(InfoField(text, "pid"))),
          std::stol(InfoField(text, "waited_ms"))};
}

bool Contains(const std::vector<pid_t> &pids, pid_t pid) {
  return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

// Waits until the daemon has settled with `idle` warm executables as its only
// children, and returns them.
std::vector<pid_t> SettledWarm(const Daemon &d, std::size_t idle) {
  REQUIRE(WaitStat(d, "warm_idle", static_cast<int64_t>(idle)));
  REQUIRE(WaitStat(d, "jobs", 0));
  REQUIRE(d.WaitChildren(idle));
  return d.Children();
}

bool ProcessGone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

}  // namespace

TEST_CASE("warm_later_calls_use_started_executables", "[warm]") {
  // One core per call: the replacement starts at the hand-off, beside the
  // call, and has long been waiting when the next call comes. (Under
  // `adaptive` a lone call holds every core and the replacement starts when
  // the call ends: policy_test covers when each happens.)
  WarmFixture fx({"--thread-budget", "split"});
  Info first = CallInfo(*fx.daemon, 1);
  CHECK(first.waited_ms < 1000);  // started for the call
  std::vector<pid_t> warm = SettledWarm(*fx.daemon, 1);
  CHECK_FALSE(Contains(warm, first.pid));
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "warm_misses") == 1);
  CHECK(Stat(s, "warm_hits") == 0);
  CHECK(Stat(s, "executables_started") == 2);  // the call's and the warm one
  CHECK(Stat(s, "warm_executables") == 1);

  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(300ms);
    Info next = CallInfo(*fx.daemon, 2 + i);
    // Served by the executable that already waited before the call was made.
    CHECK(Contains(warm, next.pid));
    CHECK(next.waited_ms >= 250);
    warm = SettledWarm(*fx.daemon, 1);
    CHECK_FALSE(Contains(warm, next.pid));
  }
  s = GetStats(*fx.daemon);
  CHECK(Stat(s, "warm_hits") == 4);
  CHECK(Stat(s, "warm_misses") == 1);
  CHECK(Stat(s, "executables_started") == 6);
  CHECK(Stat(s, "completed") == 5);
  CHECK(Stat(s, "function.info.calls") == 5);
  CHECK(fx.daemon->WaitNoZombies());

  // Each function is warmed on its own, after its own first call.
  std::string result;
  REQUIRE(WarmCall(*fx.daemon, "echo", 10, 0, DoublePayload(3), &result).ok());
  SettledWarm(*fx.daemon, 2);
  CHECK(Stat(GetStats(*fx.daemon), "warm_misses") == 2);
}

TEST_CASE("warm_executable_environment_and_handoff", "[warm]") {
  WarmFixture fx({"--thread-budget", "fixed", "--threads-per-job", "3", "--max-call-bytes", "1M"});
  CallInfo(*fx.daemon, 1);
  SettledWarm(*fx.daemon, 1);
  std::string text;
  REQUIRE(WarmCall(*fx.daemon, "info", 42, 0, DoublePayload(1), &text).ok());
  CHECK(Stat(GetStats(*fx.daemon), "warm_hits") == 1);
  // Started single-threaded; each call's budget comes in CTL_HANDOFF.
  CHECK(InfoField(text, "OPENBLAS_NUM_THREADS") == "1");
  CHECK(InfoField(text, "OMP_NUM_THREADS") == "1");
  CHECK(InfoField(text, "threads") == "3");
  CHECK(InfoField(text, "NINF_CALL_ID") == "(unset)");
  CHECK(InfoField(text, "NINF_OFFLOAD") == "0");
  CHECK(InfoField(text, "call_id") == "42");  // from CTL_HANDOFF
  CHECK(InfoField(text, "max_call_bytes") == "1048576");
  // Started while other calls' sockets were open, it still holds only its own.
  CHECK_THAT(text, Catch::EndsWith(" fds=0,1,2,3,4"));
}

TEST_CASE("warm_idle_executable_killed_is_replaced", "[warm]") {
  WarmFixture fx;
  CallInfo(*fx.daemon, 1);
  pid_t victim = SettledWarm(*fx.daemon, 1).at(0);
  ::kill(victim, SIGKILL);
  // Replaced (within the one-per-second restart limit), and reaped.
  bool replaced = false;
  for (int i = 0; i < 300 && !replaced; ++i) {
    std::vector<pid_t> now = fx.daemon->Children();
    replaced = now.size() == 1 && now[0] != victim && fx.daemon->ZombieChildren().empty();
    if (!replaced) std::this_thread::sleep_for(10ms);
  }
  REQUIRE(replaced);
  REQUIRE(WaitStat(*fx.daemon, "warm_idle", 1));
  Info next = CallInfo(*fx.daemon, 2);
  CHECK(next.pid != victim);
  REQUIRE(WaitStat(*fx.daemon, "completed", 2));  // CALL_DONE comes after the result
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "warm_hits") == 1);
  CHECK(Stat(s, "failed") == 0);
  CHECK(Stat(s, "completed") == 2);
}

TEST_CASE("warm_crash_at_start_is_rate_limited_then_given_up", "[warm]") {
  WarmFixture fx;
  std::string result;
  auto start = std::chrono::steady_clock::now();
  // The call itself fails: its executable dies before it reads the hand-off.
  Status st = WarmCall(*fx.daemon, "diestart", 1, 0, DoublePayload(1), &result);
  CHECK(st.code() == NINF_ERR_EXECUTABLE);
  // The warm executables die at once too. They are restarted at most once a
  // second, and after 5 early deaths in a row the function is given up: 1
  // cold + 5 warm starts, over about 3 s, then no more.
  REQUIRE(WaitStat(*fx.daemon, "executables_started", 6, 10000));
  CHECK(std::chrono::steady_clock::now() - start >= 2500ms);
  std::this_thread::sleep_for(1500ms);
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "executables_started") == 6);
  CHECK(Stat(s, "warm_idle") == 0);
  CHECK(fx.daemon->WaitNoChildren());
  // Its calls now start cold and warm nothing.
  st = WarmCall(*fx.daemon, "diestart", 2, 0, DoublePayload(1), &result);
  CHECK(st.code() == NINF_ERR_EXECUTABLE);
  std::this_thread::sleep_for(300ms);
  CHECK(Stat(GetStats(*fx.daemon), "executables_started") == 7);
  // Other functions are not affected.
  CallInfo(*fx.daemon, 3);
  SettledWarm(*fx.daemon, 1);
}

TEST_CASE("warm_disabled_restores_cold_starts", "[warm]") {
  WarmFixture fx({"--warm-executables", "0"});
  for (int i = 0; i < 3; ++i) {
    Info info = CallInfo(*fx.daemon, 1 + i);
    CHECK(info.waited_ms < 1000);
    CHECK(fx.daemon->WaitNoChildren());
  }
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "executables_started") == 3);
  CHECK(Stat(s, "warm_hits") == 0);
  CHECK(Stat(s, "warm_misses") == 3);
  CHECK(Stat(s, "warm_idle") == 0);
  CHECK(Stat(s, "warm_executables") == 0);
}

TEST_CASE("warm_pool_size_per_function", "[warm]") {
  WarmFixture fx({"--warm-executables", "3"});
  CallInfo(*fx.daemon, 1);
  std::vector<pid_t> warm = SettledWarm(*fx.daemon, 3);
  CHECK(Stat(GetStats(*fx.daemon), "running") == 0);  // idle ones hold no slot
  // Three calls at once are all served warm.
  std::vector<std::thread> clients;
  std::vector<Info> infos(3);
  for (int i = 0; i < 3; ++i)
    clients.emplace_back([&, i] {
      std::string text;
      Channel ch(fx.daemon->Connect(), 10000);
      SendCall(ch, "info", 10 + i, 200, DoublePayload(1));
      if (RecvResult(ch, &text).ok())
        infos[i] = {static_cast<pid_t>(std::stol(InfoField(text, "pid"))), 0};
    });
  for (auto &t : clients) t.join();
  for (const Info &info : infos) CHECK(Contains(warm, info.pid));
  CHECK(Stat(GetStats(*fx.daemon), "warm_hits") == 3);
  SettledWarm(*fx.daemon, 3);
}

TEST_CASE("warm_queued_and_persistent_calls_use_warm_executables", "[warm]") {
  WarmFixture fx({"--slots", "1"});
  std::string result;
  REQUIRE(WarmCall(*fx.daemon, "echo", 1, 0, DoublePayload(2), &result).ok());
  SettledWarm(*fx.daemon, 1);
  // A slow call takes the warm one; a queued call waits, then takes the
  // replacement.
  Channel a(fx.daemon->Connect(), 10000);
  Channel b(fx.daemon->Connect(), 10000);
  SendCall(a, "echo", 2, 400, DoublePayload(3));
  REQUIRE(WaitStat(*fx.daemon, "running", 1));
  SendCall(b, "echo", 3, 0, DoublePayload(4));
  REQUIRE(WaitStat(*fx.daemon, "queued", 1));
  REQUIRE(RecvResult(a, &result).ok());
  REQUIRE(RecvResult(b, &result).ok());
  CHECK(result == DoublePayload(4));
  CHECK(Stat(GetStats(*fx.daemon), "warm_hits") == 2);
  SettledWarm(*fx.daemon, 1);
  // A persistent session is handed a warm executable too.
  Channel p(fx.daemon->Connect(), 10000);
  SendCall(p, "echo", 4, 0, DoublePayload(5), /*persistent=*/true);
  REQUIRE(RecvResult(p, &result).ok());
  SendArgs(p, 0, DoublePayload(6));
  REQUIRE(RecvResult(p, &result).ok());
  CHECK(result == DoublePayload(6));
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "warm_hits") == 3);
  CHECK(Stat(s, "persistent_executables") == 1);
  wire::End end;
  REQUIRE(p.SendFrame(FRAME_END, &end).ok());
  REQUIRE(WaitStat(*fx.daemon, "persistent_executables", 0));
  SettledWarm(*fx.daemon, 1);
  CHECK(Stat(GetStats(*fx.daemon), "completed") == 5);
}

TEST_CASE("warm_crash_during_call_is_reported", "[warm]") {
  WarmFixture fx;
  std::string result;
  CHECK(WarmCall(*fx.daemon, "crash", 1, 0, DoublePayload(2), &result).code() ==
        NINF_ERR_EXECUTABLE);
  SettledWarm(*fx.daemon, 1);
  Status st = WarmCall(*fx.daemon, "crash", 2, 0, DoublePayload(2), &result);
  CHECK(st.code() == NINF_ERR_EXECUTABLE);
  CHECK(st.message() == "executable for 'crash' died: signal 9");
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "warm_hits") == 1);
  CHECK(Stat(s, "function.crash.failed") == 2);
  // A crash in a call is not an idle death: the function stays warm.
  SettledWarm(*fx.daemon, 1);
}

TEST_CASE("warm_executables_killed_on_reload", "[warm]") {
  WarmFixture fx;
  CallInfo(*fx.daemon, 1);
  pid_t warm = SettledWarm(*fx.daemon, 1).at(0);
  fx.daemon->Signal(SIGHUP);
  REQUIRE(WaitStat(*fx.daemon, "warm_idle", 0));
  REQUIRE(fx.daemon->WaitNoChildren());
  CHECK(ProcessGone(warm));
  // The function is warmed again after its next (cold) call.
  Info next = CallInfo(*fx.daemon, 2);
  CHECK(next.pid != warm);
  SettledWarm(*fx.daemon, 1);
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "warm_misses") == 2);
  CHECK(Stat(s, "warm_hits") == 0);
}

TEST_CASE("warm_executables_killed_on_shutdown", "[warm]") {
  WarmFixture fx({"--warm-executables", "2"});
  CallInfo(*fx.daemon, 1);
  std::string result;
  REQUIRE(WarmCall(*fx.daemon, "echo", 2, 0, DoublePayload(1), &result).ok());
  std::vector<pid_t> warm = SettledWarm(*fx.daemon, 4);
  auto start = std::chrono::steady_clock::now();
  CHECK(fx.daemon->Stop() == 0);
  CHECK(std::chrono::steady_clock::now() - start < 3s);
  // ninfd killed and reaped them before it exited.
  for (pid_t pid : warm) CHECK(ProcessGone(pid));
}

TEST_CASE("warm_no_fd_or_process_leak", "[warm]") {
  WarmFixture fx;
  std::string result;
  REQUIRE(WarmCall(*fx.daemon, "echo", 1, 0, DoublePayload(2), &result).ok());
  REQUIRE(WarmCall(*fx.daemon, "crash", 2, 0, DoublePayload(2), &result).code() ==
          NINF_ERR_EXECUTABLE);
  SettledWarm(*fx.daemon, 2);
  REQUIRE(WaitStat(*fx.daemon, "connections", 1));
  std::this_thread::sleep_for(200ms);
  auto fds = [&] {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto &e :
         std::filesystem::directory_iterator("/proc/" + std::to_string(fx.daemon->pid()) + "/fd"))
      ++n;
    return n;
  };
  std::size_t before = fds();
  for (int i = 0; i < 20; ++i) {
    const char *name = i % 4 == 3 ? "crash" : "echo";
    Status st = WarmCall(*fx.daemon, name, 10 + i, 0, DoublePayload(i + 1), &result);
    CHECK(st.ok() == (i % 4 != 3));
  }
  SettledWarm(*fx.daemon, 2);
  for (int i = 0; i < 300 && fds() != before; ++i) std::this_thread::sleep_for(10ms);
  CHECK(fds() == before);
  CHECK(Stat(GetStats(*fx.daemon), "warm_hits") == 20);
}

TEST_CASE("warm_at_start_first_call_finds_an_executable_waiting", "[warm]") {
  WarmFixture fx({"--warm-at-start", "info, info"});  // a repeated name counts once
  // Started with the daemon, before any call.
  std::vector<pid_t> warm = SettledWarm(*fx.daemon, 1);
  CHECK(Stat(GetStats(*fx.daemon), "executables_started") == 1);
  std::this_thread::sleep_for(300ms);
  Info first = CallInfo(*fx.daemon, 1);
  CHECK(Contains(warm, first.pid));
  CHECK(first.waited_ms >= 250);
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "warm_hits") == 1);
  CHECK(Stat(s, "warm_misses") == 0);

  // SIGHUP kills the idle executables and starts the listed ones again.
  warm = SettledWarm(*fx.daemon, 1);
  fx.daemon->Signal(SIGHUP);
  bool replaced = false;
  for (int i = 0; i < 500 && !replaced; ++i) {
    std::this_thread::sleep_for(10ms);
    std::vector<pid_t> now = fx.daemon->Children();
    replaced = now.size() == 1 && !Contains(warm, now[0]) && ProcessGone(warm.at(0));
  }
  CHECK(replaced);
  CHECK(WaitStat(*fx.daemon, "warm_idle", 1));
}

TEST_CASE("warm_at_start_unknown_function_stops_the_start", "[warm]") {
  const std::string cmd = NinfdPath() +
                          " --port 0 --listen 127.0.0.1 --unix-socket '' "
                          "--warm-at-start dgesv,no_such_function 2>&1";
  FILE *p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int rc = ::pclose(p);
  CHECK(WEXITSTATUS(rc) == 1);
  CHECK_THAT(out, Catch::Contains("warm_at_start names 'no_such_function'"));
}
