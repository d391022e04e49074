// Black-box tests of ninfd with an executable built on the real stub runtime
// (stub_scale.cc): full calls, persistent calls, a kill -9 in the middle of a
// call, a client that leaves, and the limits the daemon hands over. ninfd
// runs with its defaults, so one warm executable of scale stays started
// after the first call.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

#include "tests/server/daemon_fixture.h"
#include "tests/server/stub_fixture.h"
#include "tests/server/test_client.h"

using namespace ninf;
using namespace ninf::test;
using namespace std::chrono_literals;

using Fixture = StubFixture;

TEST_CASE("stub_call_scale", "[stub]") {
  // One core of two per call, so that a warm replacement starts beside the
  // call (under `adaptive` a lone call holds every core and the replacement
  // waits for its end: policy_test covers both).
  Fixture fx({"--thread-budget", "split"});
  Channel ch(fx.daemon->Connect(), 10000);
  wire::FunctionInterface iface;
  REQUIRE(QueryInterface(ch, "scale", &iface).ok());
  CHECK(iface.params_size() == 4);
  SendScale(ch, 1, 1000, 2.5, 0);
  std::string result;
  REQUIRE(RecvResult(ch, &result).ok());
  std::vector<double> a = Doubles(result);
  REQUIRE(a.size() == 1000);
  for (int i = 0; i < 1000; ++i) CHECK(a[i] == 2.5 * i);
  REQUIRE(WaitStat(*fx.daemon, "completed", 1));
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "bytes_in") >= 8000);
  CHECK(Stat(s, "bytes_out") >= 8000);
  // The call's executable is back in the pool (reused), next to the warm
  // one started at its hand-off.
  CHECK(WaitStat(*fx.daemon, "warm_idle", 2));
  CHECK(fx.daemon->WaitChildren(2));
}

TEST_CASE("stub_call_persistent", "[stub]") {
  Fixture fx({"--slots", "1"});
  Channel ch(fx.daemon->Connect(), 10000);
  SendScale(ch, 2, 10, 2.0, 0, /*persistent=*/true);
  std::string result;
  REQUIRE(RecvResult(ch, &result).ok());
  for (int k = 3; k <= 5; ++k) {
    WriteAll(ch.fd(), ScaleArgs(10, k, 0, DoublePayload(10)));
    REQUIRE(RecvResult(ch, &result).ok());
    CHECK(Doubles(result)[9] == 9.0 * k);
  }
  // Between calls the handle keeps its slot while nobody else asks for one
  // (protocol/slot_lease.h).
  REQUIRE(WaitStat(*fx.daemon, "kept_slots", 1));
  CHECK(Stat(GetStats(*fx.daemon), "running") == 1);
  // ninfd books a call when its executable reports it done, which may come
  // after the client has read the result (under load it does): waited for.
  CHECK(WaitStat(*fx.daemon, "function.scale.calls", 4));
  auto idle = GetStats(*fx.daemon);
  CHECK(Stat(idle, "persistent_executables") == 1);
  wire::End end;
  REQUIRE(ch.SendFrame(FRAME_END, &end).ok());
  REQUIRE(WaitStat(*fx.daemon, "persistent_executables", 0));
  CHECK(fx.daemon->WaitChildren(1));  // the warm one
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "completed") == 4);
  CHECK(Stat(s, "failed") == 0);
  // The session's executable, and the warm one started after its hand-off.
  CHECK(Stat(s, "executables_started") == 2);
  CHECK(Stat(s, "warm_misses") == 1);
}

namespace {

// One more call of an open scale handle: a[i] = i * factor (after sleep_ms).
void ScaleAgain(Channel &ch, double factor, int64_t sleep_ms) {
  WriteAll(ch.fd(), ScaleArgs(10, factor, sleep_ms, DoublePayload(10)));
}

void CheckScaled(Channel &ch, double factor) {
  std::string result;
  REQUIRE(RecvResult(ch, &result).ok());
  REQUIRE(Doubles(result).size() == 10);
  CHECK(Doubles(result)[9] == 9.0 * factor);
}

}  // namespace

// A handle keeps its slot between calls while nobody else asks for one, and
// then begins its calls on it without a word to ninfd (slot_lease.h). With
// one slot, every other call needs it back: from an idle handle at once,
// from a handle in a call when that call is done.
TEST_CASE("stub_call_a_handle_keeps_its_slot_until_another_call_needs_it", "[stub]") {
  // No handle keeps a slot within the demand window of a call that waited
  // (100 ms here).
  Fixture fx({"--slots", "1", "--demand-window-ms", "100"});
  Channel h(fx.daemon->Connect(), 10000);
  SendScale(h, 20, 10, 2.0, 0, /*persistent=*/true);
  CheckScaled(h, 2.0);
  REQUIRE(WaitStat(*fx.daemon, "kept_slots", 1));
  ScaleAgain(h, 3.0, 0);
  CheckScaled(h, 3.0);
  REQUIRE(WaitStat(*fx.daemon, "kept_slot_calls", 1));  // begun on the kept slot
  CHECK(Stat(GetStats(*fx.daemon), "running") == 1);

  // Another client's call while the handle is idle: its slot is taken back.
  {
    Channel other(fx.daemon->Connect(), 10000);
    SendScale(other, 21, 10, 5.0, 0);
    CheckScaled(other, 5.0);
  }
  CHECK(Stat(GetStats(*fx.daemon), "kept_slots") == 0);
  // The handle's next call asks for a slot again, and keeps it afterwards
  // once the wait is older than the demand window.
  std::this_thread::sleep_for(300ms);
  ScaleAgain(h, 4.0, 0);
  CheckScaled(h, 4.0);
  REQUIRE(WaitStat(*fx.daemon, "kept_slots", 1));
  CHECK(Stat(GetStats(*fx.daemon), "kept_slot_calls") == 1);

  // Another call while the handle is in a call on its kept slot: it waits
  // for that call's end, and gets the slot then. The other call comes once
  // the handle's executable has begun its call on the lease (nothing
  // outside the lease page shows that: a pause, well inside the call's 5 s).
  // Sent at once, under load it could reach ninfd while the lease was still
  // idle, take the slot, and leave the handle's call queued for an instant
  // only ("queued" never read 1).
  ScaleAgain(h, 6.0, 5000);
  std::this_thread::sleep_for(500ms);
  Channel other(fx.daemon->Connect(), 10000);
  SendScale(other, 22, 10, 7.0, 0);
  REQUIRE(WaitStat(*fx.daemon, "queued", 1));
  CheckScaled(h, 6.0);
  CheckScaled(other, 7.0);
  REQUIRE(WaitStat(*fx.daemon, "kept_slot_calls", 2));
  CHECK(WaitStat(*fx.daemon, "completed", 6));
  CHECK(Stat(GetStats(*fx.daemon), "kept_slots") == 0);

  wire::End end;
  REQUIRE(h.SendFrame(FRAME_END, &end).ok());
  REQUIRE(WaitStat(*fx.daemon, "persistent_executables", 0));
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "running") == 0);
  CHECK(Stat(s, "kept_slots") == 0);
  CHECK(Stat(s, "failed") == 0);
  CHECK(Stat(s, "function.scale.calls") == 6);
}

// A call begun on a kept slot is watched as any other (ninfd reads its step
// in the lease page): its client leaving cancels it, and its wall-clock
// limit ends it with the client told.
TEST_CASE("stub_call_a_call_on_a_kept_slot_is_watched", "[stub]") {
  // Heartbeats every second: the executable's beat thread takes up a new
  // call's beats within one period, and with them ninfd's probe.
  Fixture fx({"--liveness-seconds", "1"});
  {
    Channel h(fx.daemon->Connect(), 10000);
    SendScale(h, 30, 10, 2.0, 0, /*persistent=*/true);
    CheckScaled(h, 2.0);
    REQUIRE(WaitStat(*fx.daemon, "kept_slots", 1));
    ScaleAgain(h, 3.0, 60000);           // begun on the kept slot: no word to ninfd
    std::this_thread::sleep_for(300ms);  // the call sleeps in its routine
  }                                      // the client leaves mid-call
  REQUIRE(WaitStat(*fx.daemon, "cancelled", 1));
  REQUIRE(WaitStat(*fx.daemon, "persistent_executables", 0));
  CHECK(Stat(GetStats(*fx.daemon), "running") == 0);
}

TEST_CASE("stub_call_a_call_on_a_kept_slot_is_held_to_its_wall_clock_limit", "[stub]") {
  Fixture fx({"--call-wall-seconds", "2"});
  Channel h(fx.daemon->Connect(), 10000);
  SendScale(h, 31, 10, 2.0, 0, /*persistent=*/true);
  CheckScaled(h, 2.0);
  REQUIRE(WaitStat(*fx.daemon, "kept_slots", 1));
  const auto start = std::chrono::steady_clock::now();
  ScaleAgain(h, 3.0, 60000);
  std::string result;
  Status st = RecvResult(h, &result);
  CHECK(st.code() == NINF_ERR_LIMIT);
  CHECK(std::chrono::steady_clock::now() - start < 30s);
  REQUIRE(WaitStat(*fx.daemon, "persistent_executables", 0));
  CHECK(Stat(GetStats(*fx.daemon), "running") == 0);
}

TEST_CASE("stub_call_persistent_client_just_closes", "[stub]") {
  Fixture fx;
  std::string result;
  {
    Channel ch(fx.daemon->Connect(), 10000);
    SendScale(ch, 7, 10, 2.0, 0, /*persistent=*/true);
    REQUIRE(RecvResult(ch, &result).ok());
    WriteAll(ch.fd(), ScaleArgs(10, 3.0, 0, DoublePayload(10)));
    REQUIRE(RecvResult(ch, &result).ok());
    CHECK(Doubles(result)[9] == 27.0);
    REQUIRE(WaitStat(*fx.daemon, "persistent_executables", 1));
  }  // no FRAME_END: the client closes between calls
  REQUIRE(WaitStat(*fx.daemon, "persistent_executables", 0));
  CHECK(fx.daemon->WaitChildren(1));
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "completed") == 2);
  CHECK(Stat(s, "failed") == 0);
  CHECK(Stat(s, "cancelled") == 0);
  CHECK(Stat(s, "function.scale.calls") == 2);
  CHECK(Stat(s, "function.scale.failed") == 0);
}

TEST_CASE("stub_kill9_during_call_reported", "[stub]") {
  // One process per call, so that the warm one is the only child below.
  Fixture fx({"--executable-max-calls", "1"});
  std::string result;
  {
    // A first call leaves one warm executable, the only child once settled.
    Channel first(fx.daemon->Connect(), 10000);
    SendScale(first, 2, 10, 1.0, 0);
    REQUIRE(RecvResult(first, &result).ok());
  }
  REQUIRE(fx.daemon->WaitChildren(1));
  REQUIRE(WaitStat(*fx.daemon, "warm_idle", 1));
  pid_t warm = fx.daemon->Children().at(0);
  // The slow call takes it; kill -9 it in the middle of the call.
  Channel ch(fx.daemon->Connect(), 10000);
  SendScale(ch, 3, 10, 1.0, 60000);
  REQUIRE(WaitStat(*fx.daemon, "running", 1));
  REQUIRE(WaitStat(*fx.daemon, "warm_hits", 1));
  ::kill(warm, SIGKILL);
  Status st = RecvResult(ch, &result);
  CHECK(st.code() == NINF_ERR_EXECUTABLE);
  CHECK(st.message() == "executable for 'scale' died: signal 9");
  CHECK(fx.daemon->WaitChildren(1));  // its replacement, started at hand-off
  CHECK(Stat(GetStats(*fx.daemon), "failed") == 1);
}

TEST_CASE("stub_client_gone_cancels", "[stub]") {
  Fixture fx;
  {
    Channel ch(fx.daemon->Connect(), 10000);
    SendScale(ch, 4, 10, 1.0, 60000);
    REQUIRE(WaitStat(*fx.daemon, "running", 1));
  }
  REQUIRE(WaitStat(*fx.daemon, "cancelled", 1));
  CHECK(fx.daemon->WaitChildren(1, 3000));  // the warm one stays
}

TEST_CASE("stub_stopped_executable_client_gone_reclaimed", "[stub]") {
  // A stopped executable cannot write the heartbeat whose reset would tell
  // that its client left: ninfd writes it once the probe it asked for has
  // gone unanswered for the liveness period, well before the transfer
  // timeout (watch_policy.h: DaemonBeatsForExecutable).
  Fixture fx(
      {"--liveness-seconds", "1", "--transfer-timeout-seconds", "120", "--warm-executables", "0"});
  auto ch = std::make_unique<Channel>(fx.daemon->Connect(), 10000);
  SendScale(*ch, 4, 10, 1.0, 60000);
  REQUIRE(WaitStat(*fx.daemon, "running", 1));
  std::vector<pid_t> children = fx.daemon->Children();
  REQUIRE(children.size() == 1);
  REQUIRE(::kill(children[0], SIGSTOP) == 0);
  // Read what already came (heartbeats), so that the close is a FIN and not
  // a reset: the client leaves the way a finished program does.
  char scratch[4096];
  while (::recv(ch->fd(), scratch, sizeof scratch, MSG_DONTWAIT) > 0) {
  }
  ch.reset();
  const auto left = std::chrono::steady_clock::now();
  REQUIRE(WaitStat(*fx.daemon, "cancelled", 1, 10000));
  CHECK(std::chrono::steady_clock::now() - left < std::chrono::seconds(10));
  CHECK(fx.daemon->WaitChildren(0, 3000));
  CHECK(Stat(GetStats(*fx.daemon), "running") == 0);
}

TEST_CASE("stub_argument_mismatch_from_executable", "[stub]") {
  Fixture fx;
  Channel ch(fx.daemon->Connect(), 10000);
  wire::CallRequest call;
  call.set_name("scale");
  call.set_call_id(5);
  // n says 10 doubles, the payload has 3.
  WriteAll(ch.fd(), FrameBytes(FRAME_CALL, &call) + ScaleArgs(10, 1.0, 0, DoublePayload(3)));
  std::string result;
  Status st = RecvResult(ch, &result);
  CHECK(st.code() == NINF_ERR_ARGUMENT_MISMATCH);
  REQUIRE(WaitStat(*fx.daemon, "failed", 1));
  CHECK(Stat(GetStats(*fx.daemon), "function.scale.failed") == 1);
}

TEST_CASE("stub_max_call_bytes_reaches_executable", "[stub]") {
  Fixture fx({"--max-call-bytes", "1K"});
  Channel ch(fx.daemon->Connect(), 10000);
  SendScale(ch, 6, 1000, 1.0, 0);  // 8000 bytes > 1 KiB
  std::string result;
  CHECK(RecvResult(ch, &result).code() == NINF_ERR_TOO_LARGE);
}
