// Black-box tests of heartbeats (CallRequest.heartbeat_ms): the executable,
// built on the real stub runtime (stub_scale), sends FRAME_HEARTBEAT while
// its routine runs; ninfd sends them while the call waits in its queue. The
// client reads raw frames here, counting heartbeats, instead of skipping
// them as Channel::RecvReply does.
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <thread>

#include "tests/server/daemon_fixture.h"
#include "tests/server/stub_fixture.h"
#include "tests/server/test_client.h"

using namespace ninf;
using namespace ninf::test;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

struct Received {
  Status status;
  std::string payload;
  std::vector<Clock::time_point> beats;  // arrival of each heartbeat
};

// Reads frames up to the RESULT (or ERROR), counting heartbeats before it.
Received RecvCounting(Channel &ch) {
  Received r;
  for (;;) {
    FrameHeader h;
    r.status = ch.RecvHeader(uint64_t{1} << 32, &h);
    if (!r.status.ok()) return r;
    if (h.type == FRAME_HEARTBEAT) {
      r.beats.push_back(Clock::now());
      CHECK(h.payload_length == 0);
      wire::Heartbeat beat;
      r.status = ch.RecvMessage(h, &beat);
      if (!r.status.ok()) return r;
      continue;
    }
    if (h.type == FRAME_ERROR) {
      wire::Error err;
      r.status = ch.RecvMessage(h, &err);
      if (r.status.ok()) r.status = Status(ErrorFromWire(err.code()), err.message());
      return r;
    }
    if (h.type != FRAME_RESULT) {
      r.status = Status(NINF_ERR_PROTOCOL, std::string("got ") + FrameTypeName(h.type));
      return r;
    }
    wire::Result result;
    r.status = ch.RecvMessage(h, &result);
    if (!r.status.ok()) return r;
    r.payload.assign(h.payload_length, '\0');
    iovec into{r.payload.data(), r.payload.size()};
    r.status = ch.RecvPayload({&into, 1});
    return r;
  }
}

bool ScaledCorrectly(const std::string &payload, int n, double factor) {
  std::vector<double> a = Doubles(payload);
  if (a.size() != static_cast<std::size_t>(n)) return false;
  for (int i = 0; i < n; ++i)
    if (a[i] != factor * i) return false;
  return true;
}

std::size_t CountBefore(const std::vector<Clock::time_point> &beats, Clock::time_point t) {
  std::size_t n = 0;
  for (auto b : beats) n += b < t ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("heartbeat_slow_call_beats_then_result", "[heartbeat]") {
  StubFixture fx;
  Channel ch(fx.daemon->Connect(), 10000);
  SendScale(ch, 1, 1000, 2.0, 500, false, 50);
  Received r = RecvCounting(ch);
  REQUIRE(r.status.ok());
  CHECK(ScaledCorrectly(r.payload, 1000, 2.0));
  // 500 ms of computing at one beat per 50 ms: about 10, plus one per 50 ms
  // that the slot's grant takes. The bounds only tell "beats at its period"
  // from "none" or "a flood": a loaded machine moves the count by a few.
  CHECK(r.beats.size() >= 5);
  CHECK(r.beats.size() <= 16);
  REQUIRE(WaitStat(*fx.daemon, "completed", 1));
}

TEST_CASE("heartbeat_none_unless_asked", "[heartbeat]") {
  StubFixture fx;
  Channel ch(fx.daemon->Connect(), 10000);
  SendScale(ch, 1, 100, 3.0, 300, false, 0);
  Received r = RecvCounting(ch);
  REQUIRE(r.status.ok());
  CHECK(r.beats.empty());
  CHECK(ScaledCorrectly(r.payload, 100, 3.0));
}

TEST_CASE("heartbeat_period_has_a_floor", "[heartbeat]") {
  StubFixture fx;
  Channel ch(fx.daemon->Connect(), 10000);
  SendScale(ch, 1, 100, 1.0, 300, false, 1);  // 1 ms is raised to 10 ms
  Received r = RecvCounting(ch);
  REQUIRE(r.status.ok());
  CHECK(r.beats.size() >= 5);
  CHECK(r.beats.size() <= 31);
}

TEST_CASE("heartbeat_result_never_interleaves", "[heartbeat]") {
  // Large results right behind frequent beats, several times on one
  // persistent connection: any interleaving would break the framing.
  StubFixture fx;
  constexpr int n = 1 << 20;  // 8 MiB each way
  Channel ch(fx.daemon->Connect(), 20000);
  SendScale(ch, 1, n, 2.0, 60, /*persistent=*/true, 10);
  for (int call = 0; call < 4; ++call) {
    if (call > 0) WriteAll(ch.fd(), ScaleArgs(n, 2.0 + call, 60, DoublePayload(n)));
    Received r = RecvCounting(ch);
    REQUIRE(r.status.ok());
    CHECK(r.beats.size() >= 1);
    CHECK(ScaledCorrectly(r.payload, n, 2.0 + call));
  }
  wire::End end;
  REQUIRE(ch.SendFrame(FRAME_END, &end).ok());
  REQUIRE(WaitStat(*fx.daemon, "completed", 4));
  CHECK(Stat(GetStats(*fx.daemon), "failed") == 0);
}

TEST_CASE("heartbeat_queued_call_beats_from_ninfd", "[heartbeat]") {
  StubFixture fx({"--slots", "1"});
  Channel a(fx.daemon->Connect(), 10000);
  Channel b(fx.daemon->Connect(), 10000);
  SendScale(a, 1, 10, 1.0, 700);  // holds the only slot, no heartbeats
  REQUIRE(WaitStat(*fx.daemon, "running", 1));
  SendScale(b, 2, 10, 4.0, 0, false, 50);
  REQUIRE(WaitStat(*fx.daemon, "queued", 1));
  auto a_done = std::async(std::launch::async, [&] {
    Received r = RecvCounting(a);
    CHECK(r.beats.empty());
    CHECK(r.status.ok());
    return Clock::now();
  });
  Received r = RecvCounting(b);
  REQUIRE(r.status.ok());
  CHECK(ScaledCorrectly(r.payload, 10, 4.0));
  // B waited ~600 ms in the queue (about 12 periods): ninfd's beats arrived
  // before A finished. At least 3, so that a late start of the beats on a
  // loaded machine is not taken for their absence.
  CHECK(CountBefore(r.beats, a_done.get()) >= 3);
}

TEST_CASE("heartbeat_ninfd_stops_at_handoff", "[heartbeat]") {
  // The "silent" fake executable never sends heartbeats: any beat during
  // its own computation would have come from ninfd after the hand-off.
  TempDir registry;
  MakeFakeRegistry(registry, {"silent"});
  // The old order: B waits for its slot before its hand-off, so ninfd
  // beats for it. (After arrival B's executable would wait, and beat.)
  Daemon d({"--registry", registry.path(), "--slots", "1", "--admission", "start"});
  Channel a(d.Connect(), 10000);
  Channel b(d.Connect(), 10000);
  SendCall(a, "silent", 1, 400, DoublePayload(2));
  REQUIRE(WaitStat(d, "running", 1));
  SendCall(b, "silent", 2, 500, DoublePayload(3), false, 30);
  REQUIRE(WaitStat(d, "queued", 1));
  // Both read at once, so that each beat is timed when it arrives.
  auto a_result = std::async(std::launch::async, [&] {
    std::string result;
    CHECK(RecvResult(a, &result).ok());
    return Clock::now();
  });
  Received r = RecvCounting(b);
  Clock::time_point a_done = a_result.get();
  REQUIRE(r.status.ok());
  CHECK(r.payload == DoublePayload(3));
  CHECK(CountBefore(r.beats, a_done) >= 3);
  // Once B was handed over (right after A's end) ninfd fell silent. B's
  // executable computes 500 ms after the hand-off: had ninfd gone on, beats
  // would arrive until then. 350 ms leaves room for ninfd's loop and this
  // thread to be late on a loaded machine and still sees 5 periods of such
  // beats.
  CHECK(CountBefore(r.beats, a_done + 350ms) == r.beats.size());
  CHECK(d.Stop() == 0);
}
