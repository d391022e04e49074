// Black-box tests of the call path: spawn, hand-off, control channel, exit,
// admission and shutdown. The executables are fake_executable.cc under
// several names (see its header for what each name does).
//
// These tests run ninfd with --warm-executables 0, so that every call starts
// its own executable and process counts are exact; warm_test.cc covers the
// default, warm path.
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <thread>

#include "tests/server/daemon_fixture.h"
#include "tests/server/fake_daemon.h"
#include "tests/server/test_client.h"

using namespace ninf;
using namespace ninf::test;
using namespace std::chrono_literals;

namespace {

// Cold starts only, so that process counts stay exact.
struct CallFixture : FakeDaemon {
  explicit CallFixture(std::vector<std::string> args = {})
      : FakeDaemon({"echo", "info", "crash", "exit3", "fail"}, WithColdStarts(std::move(args))) {}
  static std::vector<std::string> WithColdStarts(std::vector<std::string> args) {
    args.insert(args.begin(), {"--warm-executables", "0"});
    return args;
  }
};

Status ColdCall(const Daemon &d, const std::string &name, uint64_t call_id, int64_t ms,
                const std::string &payload, std::string *result, uint32_t heartbeat_ms = 0) {
  return CallFake(d, name, call_id, ms, payload, result, false, heartbeat_ms);
}

std::size_t OpenFds(pid_t pid) {
  std::size_t n = 0;
  if (DIR *d = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str())) {
    while (dirent *e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

}  // namespace

TEST_CASE("call_echo_roundtrip", "[call]") {
  CallFixture fx;
  std::string payload = DoublePayload(1000);
  std::string result;
  REQUIRE(ColdCall(*fx.daemon, "echo", 1, 0, payload, &result).ok());
  CHECK(result == payload);
  REQUIRE(WaitStat(*fx.daemon, "completed", 1));
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "function.echo.calls") == 1);
  CHECK(Stat(s, "function.echo.failed") == 0);
  CHECK(Stat(s, "executables_started") == 1);
  CHECK(Stat(s, "bytes_in") > 8000);
  CHECK(Stat(s, "bytes_out") > 8000);
  CHECK(std::stod(s.at("function.echo.mean_seconds")) > 0);
  CHECK(fx.daemon->WaitNoChildren());
  CHECK(fx.daemon->WaitNoZombies());
}

TEST_CASE("call_after_query_on_same_connection", "[call]") {
  CallFixture fx;
  Channel ch(fx.daemon->Connect(), 10000);
  wire::FunctionInterface iface;
  REQUIRE(QueryInterface(ch, "echo", &iface).ok());
  std::string payload = DoublePayload(16), result;
  SendCall(ch, "echo", 2, 0, payload);
  REQUIRE(RecvResult(ch, &result).ok());
  CHECK(result == payload);
}

TEST_CASE("call_environment_and_handoff", "[call]") {
  CallFixture fx({"--slots", "1", "--thread-budget", "fixed", "--threads-per-job", "3",
                  "--max-call-bytes", "1M"});
  std::string text;
  REQUIRE(ColdCall(*fx.daemon, "info", 77, 0, DoublePayload(1), &text, 40).ok());
  // Started single-threaded; each call's budget comes in CTL_HANDOFF.
  CHECK(InfoField(text, "OPENBLAS_NUM_THREADS") == "1");
  CHECK(InfoField(text, "OMP_NUM_THREADS") == "1");
  CHECK(InfoField(text, "threads") == "3");
  // Never set, cold or warm: the call id arrives in CTL_HANDOFF.
  CHECK(InfoField(text, "NINF_CALL_ID") == "(unset)");
  // An inherited libninf_offload never sends the routine's calls on.
  CHECK(InfoField(text, "NINF_OFFLOAD") == "0");
  CHECK(InfoField(text, "max_call_bytes") == "1048576");
  CHECK(InfoField(text, "persistent") == "0");
  CHECK(InfoField(text, "call_id") == "77");
  CHECK(InfoField(text, "heartbeat_ms") == "40");
  // A period under 10 ms is raised to 10 ms.
  REQUIRE(ColdCall(*fx.daemon, "info", 78, 0, DoublePayload(1), &text, 1).ok());
  CHECK(InfoField(text, "heartbeat_ms") == "10");
  // None asked for: the server's liveness period (5 s by default).
  REQUIRE(ColdCall(*fx.daemon, "info", 79, 0, DoublePayload(1), &text, 0).ok());
  CHECK(InfoField(text, "heartbeat_ms") == "5000");
  // stdin, stdout, stderr, the control socket and the client socket: no
  // descriptor of the daemon (or of whoever started it) leaks through.
  CHECK_THAT(text, Catch::EndsWith(" fds=0,1,2,3,4"));
}

TEST_CASE("call_threads_split_cores_under_split", "[call]") {
  CallFixture fx({"--slots", "2", "--thread-budget", "split"});
  auto s = GetStats(*fx.daemon);
  int64_t expect = std::max<int64_t>(1, Stat(s, "cores") / 2);
  CHECK(Stat(s, "threads_per_job") == expect);
  std::string text;
  REQUIRE(ColdCall(*fx.daemon, "info", 1, 0, DoublePayload(1), &text).ok());
  CHECK(InfoField(text, "threads") == std::to_string(expect));
}

// The adaptive budget, black box: a lone call gets every core; a call that
// arrives while they are all held waits, and from then on the two clients
// share the cores and run side by side.
TEST_CASE("call_adaptive_lone_call_gets_every_core_concurrent_calls_split", "[call]") {
  CallFixture fx;  // thread_budget = adaptive is the default
  auto s = GetStats(*fx.daemon);
  const int64_t cores = Stat(s, "cores");
  if (cores < 2) {
    WARN("skipped: a one-core machine has nothing to split");
    return;
  }
  std::string text;
  REQUIRE(ColdCall(*fx.daemon, "info", 1, 0, DoublePayload(1), &text).ok());
  CHECK(InfoField(text, "threads") == std::to_string(cores));
  // Its executable has ended and released the cores.
  REQUIRE(WaitStat(*fx.daemon, "threads_held", 0));

  auto in_thread = [&fx](uint64_t id, int64_t ms) {
    return std::async(std::launch::async, [&fx, id, ms] {
      std::string out;
      Status st = ColdCall(*fx.daemon, "info", id, ms, DoublePayload(1), &out);
      return st.ok() ? InfoField(out, "threads") : st.ToString();
    });
  };
  auto a = in_thread(2, 600);  // every core
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  auto b = in_thread(3, 600);  // waits for a, then half
  std::this_thread::sleep_for(std::chrono::milliseconds(750));
  auto c = in_thread(4, 200);  // arrives while b runs: the other half, at once
  const std::string half = std::to_string(cores / 2);
  CHECK(a.get() == std::to_string(cores));
  CHECK(c.get() == half);
  CHECK(b.get() == half);
  // The results reach the clients before ninfd hears that the calls ended.
  REQUIRE(WaitStat(*fx.daemon, "completed", 4));
  CHECK(WaitStat(*fx.daemon, "threads_held", 0));  // released when the executables end
}

TEST_CASE("call_executable_killed_reports_signal", "[call]") {
  CallFixture fx;
  std::string result;
  Status st = ColdCall(*fx.daemon, "crash", 3, 0, DoublePayload(4), &result);
  CHECK(st.code() == NINF_ERR_EXECUTABLE);
  CHECK(st.message() == "executable for 'crash' died: signal 9");
  REQUIRE(WaitStat(*fx.daemon, "failed", 1));
  CHECK(Stat(GetStats(*fx.daemon), "function.crash.failed") == 1);
  CHECK(fx.daemon->WaitNoChildren());
  // The daemon carries on.
  REQUIRE(ColdCall(*fx.daemon, "echo", 4, 0, DoublePayload(4), &result).ok());
}

TEST_CASE("call_executable_exit_status_reported", "[call]") {
  CallFixture fx;
  std::string result;
  Status st = ColdCall(*fx.daemon, "exit3", 5, 0, DoublePayload(4), &result);
  CHECK(st.code() == NINF_ERR_EXECUTABLE);
  CHECK(st.message() == "executable for 'exit3' died: exit status 3");
}

TEST_CASE("call_routine_error_counted_as_failed", "[call]") {
  CallFixture fx;
  std::string result;
  Status st = ColdCall(*fx.daemon, "fail", 6, 0, DoublePayload(4), &result);
  CHECK(st.code() == NINF_ERR_ARGUMENT_MISMATCH);
  CHECK(st.message() == "fake failure");
  REQUIRE(WaitStat(*fx.daemon, "failed", 1));
  CHECK(Stat(GetStats(*fx.daemon), "completed") == 0);
}

TEST_CASE("call_client_gone_kills_executable", "[call]") {
  CallFixture fx;
  {
    Channel ch(fx.daemon->Connect(), 5000);
    SendCall(ch, "echo", 7, 60000, DoublePayload(4));
    REQUIRE(WaitStat(*fx.daemon, "running", 1));
    REQUIRE(fx.daemon->Children().size() == 1);
  }  // the client leaves while the call computes
  REQUIRE(WaitStat(*fx.daemon, "cancelled", 1));
  CHECK(fx.daemon->WaitNoChildren(2000));
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "running") == 0);
  CHECK(Stat(s, "failed") == 0);
}

TEST_CASE("call_slots_queue_first_come_first_served", "[call]") {
  // The slot is given back when the result is out, so that A's result comes
  // before B's (with release_slot = "computed" B may compute while A's
  // result is being written, and finish first).
  CallFixture fx({"--slots", "1", "--release-slot", "result"});
  Channel a(fx.daemon->Connect(), 10000);
  Channel b(fx.daemon->Connect(), 10000);
  SendCall(a, "echo", 10, 600, DoublePayload(2));
  REQUIRE(WaitStat(*fx.daemon, "running", 1));
  SendCall(b, "echo", 11, 0, DoublePayload(3));
  REQUIRE(WaitStat(*fx.daemon, "queued", 1));
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "running") == 1);  // the second call waits: one slot
  // Admitted after arrival, it waits with its arguments in its own executable.
  CHECK(Stat(s, "held") == 1);
  CHECK(fx.daemon->Children().size() == 2);

  // The order as the server made it: when B's result is there to read, A's
  // already is. (Timestamps taken in two client threads after their reads
  // can be reordered by the scheduler under load.) B's executable sends
  // heartbeats only every 5 s, long after A's 0.6 s call.
  pollfd pb{b.fd(), POLLIN, 0};
  REQUIRE(::poll(&pb, 1, 10000) == 1);
  pollfd pa{a.fd(), POLLIN, 0};
  CHECK(::poll(&pa, 1, 0) == 1);
  std::string ra, rb;
  REQUIRE(RecvResult(a, &ra).ok());
  REQUIRE(RecvResult(b, &rb).ok());
  CHECK(rb == DoublePayload(3));
  REQUIRE(WaitStat(*fx.daemon, "completed", 2));
  CHECK(Stat(GetStats(*fx.daemon), "executables_started") == 2);
}

TEST_CASE("call_queue_full_is_refused", "[call]") {
  CallFixture fx({"--slots", "1", "--queue-limit", "0"});
  Channel a(fx.daemon->Connect(), 10000);
  SendCall(a, "echo", 20, 800, DoublePayload(2));
  REQUIRE(WaitStat(*fx.daemon, "running", 1));
  std::string result;
  Status st = ColdCall(*fx.daemon, "echo", 21, 0, DoublePayload(2), &result);
  CHECK(st.code() == NINF_ERR_SERVER);
  CHECK_THAT(st.message(), Catch::Contains("busy"));
  REQUIRE(RecvResult(a, &result).ok());
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "rejected") == 1);
  CHECK(Stat(s, "executables_started") == 1);
}

TEST_CASE("call_queued_client_gone_leaves_queue", "[call]") {
  CallFixture fx({"--slots", "1"});
  Channel a(fx.daemon->Connect(), 10000);
  SendCall(a, "echo", 30, 800, DoublePayload(2));
  REQUIRE(WaitStat(*fx.daemon, "running", 1));
  {
    Channel b(fx.daemon->Connect(), 10000);
    SendCall(b, "echo", 31, 0, DoublePayload(2));
    REQUIRE(WaitStat(*fx.daemon, "queued", 1));
  }
  REQUIRE(WaitStat(*fx.daemon, "queued", 0));
  CHECK(Stat(GetStats(*fx.daemon), "cancelled") == 1);
  std::string result;
  REQUIRE(RecvResult(a, &result).ok());
  REQUIRE(WaitStat(*fx.daemon, "completed", 1));
  // The queued call had its executable (admitted after arrival), killed
  // when its client left.
  CHECK(Stat(GetStats(*fx.daemon), "executables_started") == 2);
  CHECK(fx.daemon->WaitNoChildren(2000));
}

TEST_CASE("call_persistent_executable_holds_slot_only_while_computing", "[call]") {
  // Without kept slots (slot_lease.h; the fake executable never uses one).
  CallFixture fx({"--slots", "1", "--keep-handle-slots=false"});
  Channel p(fx.daemon->Connect(), 10000);
  std::string payload = DoublePayload(8), result;
  SendCall(p, "echo", 40, 0, payload, /*persistent=*/true);
  REQUIRE(RecvResult(p, &result).ok());
  CHECK(result == payload);
  // Idle between calls: the executable lives but holds no slot...
  REQUIRE(WaitStat(*fx.daemon, "running", 0));
  auto idle = GetStats(*fx.daemon);
  CHECK(Stat(idle, "jobs") == 1);
  CHECK(Stat(idle, "persistent_executables") == 1);
  CHECK(Stat(idle, "kept_slots") == 0);
  // ...so another client's call runs meanwhile.
  REQUIRE(ColdCall(*fx.daemon, "echo", 41, 0, payload, &result).ok());
  for (int i = 0; i < 3; ++i) {
    SendArgs(p, 0, DoublePayload(i + 1));
    REQUIRE(RecvResult(p, &result).ok());
    CHECK(result == DoublePayload(i + 1));
  }
  REQUIRE(WaitStat(*fx.daemon, "completed", 5));
  wire::End end;
  REQUIRE(p.SendFrame(FRAME_END, &end).ok());
  CHECK(fx.daemon->WaitNoChildren());
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "executables_started") == 2);
  CHECK(Stat(s, "function.echo.calls") == 5);
  CHECK(Stat(s, "running") == 0);
  CHECK(Stat(s, "jobs") == 0);
  CHECK(Stat(s, "persistent_executables") == 0);
}

// An executable that asks for a slot for each call although its handle
// kept one (this fake never maps the page; nor does an executable built
// before kept slots): ninfd takes the kept slot back at the request, and
// while the handle is idle another client's call takes it.
TEST_CASE("call_a_kept_slot_the_executable_does_not_use_is_taken_back", "[call]") {
  CallFixture fx({"--slots", "1"});
  Channel p(fx.daemon->Connect(), 10000);
  std::string result;
  SendCall(p, "echo", 45, 0, DoublePayload(2), /*persistent=*/true);
  REQUIRE(RecvResult(p, &result).ok());
  REQUIRE(WaitStat(*fx.daemon, "kept_slots", 1));
  CHECK(Stat(GetStats(*fx.daemon), "running") == 1);
  for (int i = 0; i < 3; ++i) {
    SendArgs(p, 0, DoublePayload(i + 3));
    REQUIRE(RecvResult(p, &result).ok());
    CHECK(result == DoublePayload(i + 3));
    REQUIRE(WaitStat(*fx.daemon, "kept_slots", 1));
  }
  REQUIRE(ColdCall(*fx.daemon, "echo", 46, 0, DoublePayload(4), &result).ok());
  REQUIRE(WaitStat(*fx.daemon, "completed", 5));
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "kept_slot_calls") == 0);
  CHECK(Stat(s, "kept_slots") == 0);
  CHECK(Stat(s, "failed") == 0);
  wire::End end;
  REQUIRE(p.SendFrame(FRAME_END, &end).ok());
  CHECK(fx.daemon->WaitNoChildren());
  CHECK(WaitStat(*fx.daemon, "running", 0));
}

TEST_CASE("call_persistent_client_closes_without_end", "[call]") {
  CallFixture fx;
  {
    Channel p(fx.daemon->Connect(), 10000);
    std::string result;
    SendCall(p, "echo", 42, 0, DoublePayload(4), /*persistent=*/true);
    REQUIRE(RecvResult(p, &result).ok());
    SendArgs(p, 0, DoublePayload(5));
    REQUIRE(RecvResult(p, &result).ok());
    CHECK(result == DoublePayload(5));
    REQUIRE(WaitStat(*fx.daemon, "persistent_executables", 1));
  }  // the client just goes away between calls
  REQUIRE(WaitStat(*fx.daemon, "persistent_executables", 0));
  CHECK(fx.daemon->WaitNoChildren());
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "completed") == 2);
  CHECK(Stat(s, "failed") == 0);
  CHECK(Stat(s, "cancelled") == 0);
  CHECK(Stat(s, "function.echo.calls") == 2);
}

TEST_CASE("call_spawn_failure_reported", "[call]") {
  CallFixture fx;
  // The registry had the program at start-up, but it is gone by call time:
  // exec fails, and the client hears why.
  ::unlink(fx.registry.Join("info").c_str());
  std::string result;
  Status st = ColdCall(*fx.daemon, "info", 50, 0, DoublePayload(2), &result);
  CHECK(st.code() == NINF_ERR_EXECUTABLE);
  CHECK_THAT(st.message(), Catch::Contains("cannot start") && Catch::Contains("info"));
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "failed") == 1);
  CHECK(Stat(s, "function.info.failed") == 1);
  CHECK(Stat(s, "executables_started") == 0);
  CHECK(Stat(s, "running") == 0);  // the slot was given back
  REQUIRE(ColdCall(*fx.daemon, "echo", 51, 0, DoublePayload(2), &result).ok());
}

TEST_CASE("call_no_fd_or_process_leak", "[call]") {
  CallFixture fx;
  std::string result;
  REQUIRE(ColdCall(*fx.daemon, "echo", 60, 0, DoublePayload(2), &result).ok());
  REQUIRE(WaitStat(*fx.daemon, "connections", 1));  // only the stats connection
  std::this_thread::sleep_for(200ms);               // and that one closed too
  std::size_t before = OpenFds(fx.daemon->pid());
  for (int i = 0; i < 20; ++i) {
    const char *name = i % 4 == 3 ? "crash" : "echo";
    Status st = ColdCall(*fx.daemon, name, 61 + i, 0, DoublePayload(i + 1), &result);
    CHECK(st.ok() == (i % 4 != 3));
  }
  CHECK(fx.daemon->WaitNoChildren());
  // Every socket, control channel and process handle is released once the
  // clients are gone (polled without opening new connections).
  for (int i = 0; i < 300 && OpenFds(fx.daemon->pid()) != before; ++i)
    std::this_thread::sleep_for(10ms);
  CHECK(OpenFds(fx.daemon->pid()) == before);
}

TEST_CASE("call_shutdown_lets_running_calls_finish", "[call]") {
  CallFixture fx({"--slots", "1", "--grace-seconds", "10"});
  Channel a(fx.daemon->Connect(), 10000);
  Channel b(fx.daemon->Connect(), 10000);
  SendCall(a, "echo", 70, 700, DoublePayload(5));
  REQUIRE(WaitStat(*fx.daemon, "running", 1));
  SendCall(b, "echo", 71, 0, DoublePayload(5));
  REQUIRE(WaitStat(*fx.daemon, "queued", 1));
  fx.daemon->Signal(SIGTERM);
  std::string result;
  Status st = RecvResult(b, &result);  // the queued call is refused
  CHECK(st.code() == NINF_ERR_SHUTTING_DOWN);
  REQUIRE(RecvResult(a, &result).ok());  // the running one completes
  CHECK(result == DoublePayload(5));
  CHECK(fx.daemon->Stop() == 0);
}

TEST_CASE("call_shutdown_kills_after_grace", "[call]") {
  CallFixture fx({"--grace-seconds", "1"});
  Channel a(fx.daemon->Connect(), 10000);
  SendCall(a, "echo", 80, 60000, DoublePayload(5));
  REQUIRE(WaitStat(*fx.daemon, "running", 1));
  auto start = std::chrono::steady_clock::now();
  fx.daemon->Signal(SIGTERM);
  std::string result;
  Status st = RecvResult(a, &result);
  CHECK(st.code() == NINF_ERR_SHUTTING_DOWN);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  CHECK(fx.daemon->Stop() == 0);
}

TEST_CASE("call_shutdown_ends_idle_persistent_executables", "[call]") {
  CallFixture fx({"--grace-seconds", "30"});
  Channel p(fx.daemon->Connect(), 10000);
  std::string result;
  SendCall(p, "echo", 90, 0, DoublePayload(3), /*persistent=*/true);
  REQUIRE(RecvResult(p, &result).ok());
  // Idle, keeping its slot for its next call (slot_lease.h).
  REQUIRE(WaitStat(*fx.daemon, "kept_slots", 1));
  auto start = std::chrono::steady_clock::now();
  // Idle between calls: shutdown does not wait out the grace period for it.
  CHECK(fx.daemon->Stop() == 0);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  // The client reads why as the answer to its next call.
  CHECK(RecvResult(p, &result).code() == NINF_ERR_SHUTTING_DOWN);
}

TEST_CASE("call_concurrent_clients", "[call]") {
  CallFixture fx({"--slots", "2", "--queue-limit", "100"});
  constexpr int kClients = 8, kCalls = 5;
  std::vector<std::future<int>> clients;
  for (int c = 0; c < kClients; ++c)
    clients.push_back(std::async(std::launch::async, [&, c] {
      int ok = 0;
      for (int i = 0; i < kCalls; ++i) {
        std::string payload = DoublePayload(c * 100 + i + 1), result;
        // Every fifth client crashes its executables; the others must not care.
        const char *name = c % 5 == 4 ? "crash" : "echo";
        Status st =
            ColdCall(*fx.daemon, name, uint64_t(c * 100 + i), i % 2 ? 20 : 0, payload, &result);
        if (st.ok() && result == payload) ++ok;
        if (!st.ok() && c % 5 == 4 && st.code() == NINF_ERR_EXECUTABLE) ++ok;
      }
      return ok;
    }));
  for (auto &c : clients) CHECK(c.get() == kCalls);
  // A slot is freed when its executable has exited, just after CALL_DONE.
  CHECK(fx.daemon->WaitNoChildren());
  REQUIRE(WaitStat(*fx.daemon, "running", 0));
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "completed") == (kClients - 1) * kCalls);
  CHECK(Stat(s, "failed") == kCalls);
  CHECK(Stat(s, "executables_started") == kClients * kCalls);
  CHECK(Stat(s, "queued") == 0);
}
