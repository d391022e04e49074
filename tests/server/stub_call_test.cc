// Black-box tests of ninfd with an executable built on the real stub runtime
// (stub_scale.cc): full calls, persistent calls, a kill -9 in the middle of a
// call, a client that leaves, and the limits the daemon hands over.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "daemon_fixture.h"
#include "test_client.h"

#ifndef STUB_SCALE_PATH
#define STUB_SCALE_PATH "stub_scale"
#endif

using namespace ninf;
using namespace ninf::test;
using namespace std::chrono_literals;

namespace {

std::string StubScalePath() {
  const char *env = std::getenv("STUB_SCALE");
  return env && *env ? env : STUB_SCALE_PATH;
}

// A registry with `scale`, its interface written by the executable itself
// (`--interface`, as the runtime documents).
struct Fixture {
  TempDir registry;
  std::unique_ptr<Daemon> daemon;

  explicit Fixture(std::vector<std::string> args = {}) {
    std::string cmd = StubScalePath() + " --interface > " + registry.Join("scale.interface");
    REQUIRE(std::system(cmd.c_str()) == 0);
    REQUIRE(::symlink(StubScalePath().c_str(), registry.Join("scale").c_str()) == 0);
    args.insert(args.begin(), {"--registry", registry.path()});
    daemon = std::make_unique<Daemon>(args);
  }
  ~Fixture() {
    if (daemon->Running()) CHECK(daemon->Stop() == 0);
  }
};

std::string ScaleArgs(int64_t n, double factor, int64_t sleep_ms, const std::string &payload) {
  wire::Args args;
  args.add_scalars()->set_i(n);
  args.add_scalars()->set_d(factor);
  args.add_scalars()->set_i(sleep_ms);
  return FrameBytes(FRAME_ARGS, &args, payload);
}

void SendScale(Channel &ch, uint64_t call_id, int n, double factor, int64_t sleep_ms,
               bool persistent = false) {
  wire::CallRequest call;
  call.set_name("scale");
  call.set_call_id(call_id);
  call.set_persistent(persistent);
  WriteAll(ch.fd(),
           FrameBytes(FRAME_CALL, &call) + ScaleArgs(n, factor, sleep_ms, DoublePayload(n)));
}

std::vector<double> Doubles(const std::string &bytes) {
  std::vector<double> out(bytes.size() / sizeof(double));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(double));
  return out;
}

bool WaitStat(const Daemon &d, const std::string &name, int64_t value) {
  for (int i = 0; i < 500; ++i) {
    if (Stat(GetStats(d), name) == value) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

}  // namespace

TEST_CASE("stub_call_scale", "[stub]") {
  Fixture fx;
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
  CHECK(fx.daemon->WaitNoChildren());
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
  REQUIRE(WaitStat(*fx.daemon, "running", 0));
  wire::End end;
  REQUIRE(ch.SendFrame(FRAME_END, &end).ok());
  CHECK(fx.daemon->WaitNoChildren());
  auto s = GetStats(*fx.daemon);
  CHECK(Stat(s, "completed") == 4);
  CHECK(Stat(s, "executables_started") == 1);
}

TEST_CASE("stub_kill9_during_call_reported", "[stub]") {
  Fixture fx;
  Channel ch(fx.daemon->Connect(), 10000);
  SendScale(ch, 3, 10, 1.0, 60000);
  REQUIRE(WaitStat(*fx.daemon, "running", 1));
  std::vector<pid_t> children;
  for (int i = 0; i < 500 && children.empty(); ++i) {
    children = fx.daemon->Children();
    std::this_thread::sleep_for(10ms);
  }
  REQUIRE(children.size() == 1);
  ::kill(children[0], SIGKILL);
  std::string result;
  Status st = RecvResult(ch, &result);
  CHECK(st.code() == NINF_ERR_EXECUTABLE);
  CHECK(st.message() == "executable for 'scale' died: signal 9");
  CHECK(fx.daemon->WaitNoChildren());
  CHECK(fx.daemon->ZombieChildren().empty());
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
  CHECK(fx.daemon->WaitNoChildren(3000));
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
