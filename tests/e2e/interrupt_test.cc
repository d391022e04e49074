// The interrupt check of ninf_binding.h (what Python's Ctrl-C uses) against
// the real ninfd: a check that says stop ends a long call with
// NINF_ERR_CANCELLED, and ninfd, seeing the reset, ends the call's job; a
// check that says go on, or none, changes nothing; a handle whose call was
// stopped serves the next one.
//
// The check answers for this test's main thread only, as Python's does:
// the fixture's stats queries, from other threads, go through the same
// waits. Catch2's assertions are not thread-safe, so the helper thread only
// records what it saw.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "client/grpc.h"
#include "client/ninf.h"
#include "client/ninf_binding.h"
#include "tests/e2e/e2e_fixture.h"

namespace {

using Clock = std::chrono::steady_clock;

// ep(40) runs for hours: a call that returns was stopped.
constexpr long kHoursEp = 40;
// What the test tolerates between "stop" and the call's return. By design
// it is one slice (100 ms); the bound only tells stopped from not stopped.
constexpr double kStopBoundSeconds = 15.0;

std::atomic<bool> g_stop{false};
std::atomic<int> g_asked{0};
thread_local bool t_interruptible = false;

int StopWhenAsked(void) {
  if (!t_interruptible) return 0;
  ++g_asked;
  return g_stop.load() ? 1 : 0;
}

// Sets the check for this thread's calls for one test case; removes it after.
struct Interruptible {
  Interruptible() {
    g_stop = false;
    g_asked = 0;
    t_interruptible = true;
    Ninf_binding_set_interrupt(StopWhenAsked);
  }
  ~Interruptible() {
    Ninf_binding_set_interrupt(nullptr);
    t_interruptible = false;
  }
};

// Once ninfd runs the call (its "running" stat), says stop; records when.
class Stopper {
 public:
  explicit Stopper(const E2EDaemon &d)
      : thread_([this, &d] {
          // Polled for up to 30 s (WaitForStat gives up after 5): a loaded
          // machine may start the executable late.
          for (int waited = 0; waited < 30000; waited += 50) {
            running_seen_ = d.Stat("running");
            if (running_seen_ >= 1) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
          }
          stopped_at_ = Clock::now();
          g_stop = true;
        }) {}
  // After the call returned: seconds from "stop" to `returned`.
  double Join(Clock::time_point returned) {
    thread_.join();
    return std::chrono::duration<double>(returned - stopped_at_).count();
  }
  long running_seen() const { return running_seen_; }

 private:
  long running_seen_ = -1;
  Clock::time_point stopped_at_;
  std::thread thread_;
};

bool StatDownTo(const E2EDaemon &d, const std::string &name, long at_most, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 50) {
    if (d.Stat(name) <= at_most) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

char *C(const std::string &s) { return const_cast<char *>(s.c_str()); }

}  // namespace

TEST_CASE("interrupt_check_stops_a_long_call_and_ninfd_ends_its_job", "[e2e]") {
  E2EDaemon d;
  double sx = 0, sy = 0, q[10] = {};
  REQUIRE(Ninf_call(d.Name("ep").c_str(), 16L, &sx, &sy, q) == 0);  // interface cached
  double seconds = 0;
  int rc = 0;
  long running_seen = 0;
  {
    Interruptible scope;
    Stopper stopper(d);
    rc = Ninf_call(d.Name("ep").c_str(), kHoursEp, &sx, &sy, q);
    seconds = stopper.Join(Clock::now());
    running_seen = stopper.running_seen();
  }
  const int error = Ninf_get_error();
  const std::string detail = Ninf_get_error_detail();
  WARN("interrupt to return: " << seconds << " s");
  CHECK(running_seen >= 1);  // stopped while ninfd ran it, not before
  CHECK(rc != 0);
  CHECK(error == NINF_ERR_CANCELLED);
  CHECK(detail.find("interrupted") != std::string::npos);
  CHECK(seconds < kStopBoundSeconds);
  // The connection was reset: ninfd killed the executable.
  CHECK(StatDownTo(d, "running", 0, 10000));
  CHECK(d.ZombieChildren() == 0);
  // The library and the server serve the next call.
  CHECK(Ninf_call(d.Name("ep").c_str(), 16L, &sx, &sy, q) == 0);
}

TEST_CASE("interrupt_check_that_says_go_on_or_none_changes_nothing", "[e2e]") {
  E2EDaemon d;
  double sx0 = 0, sy0 = 0, q0[10] = {};
  REQUIRE(Ninf_call(d.Name("ep").c_str(), 24L, &sx0, &sy0, q0) == 0);  // no check
  double sx = 0, sy = 0, q[10] = {};
  int asked = 0;
  {
    Interruptible scope;  // asked, and says go on
    REQUIRE(Ninf_call(d.Name("ep").c_str(), 24L, &sx, &sy, q) == 0);
    asked = g_asked.load();
  }
  CHECK(asked >= 1);
  CHECK(sx == sx0);
  CHECK(sy == sy0);
  // A check that would say stop, removed: never asked again.
  {
    Interruptible scope;
    g_stop = true;
    Ninf_binding_set_interrupt(nullptr);
    g_asked = 0;
    CHECK(Ninf_call(d.Name("ep").c_str(), 20L, &sx, &sy, q) == 0);
    CHECK(g_asked == 0);
  }
}

TEST_CASE("interrupt_of_a_handle_call_leaves_the_handle_usable", "[e2e]") {
  E2EDaemon d;
  REQUIRE(grpc_initialize(nullptr) == GRPC_NO_ERROR);
  grpc_function_handle_t h;
  const std::string server = "127.0.0.1:" + std::to_string(d.port());
  REQUIRE(grpc_function_handle_init(&h, C(server), C("ep")) == GRPC_NO_ERROR);
  double sx = 0, sy = 0, q[10] = {};
  grpc_error_t e = GRPC_NO_ERROR;
  double seconds = 0;
  {
    Interruptible scope;
    Stopper stopper(d);
    e = grpc_call(&h, kHoursEp, &sx, &sy, q);
    seconds = stopper.Join(Clock::now());
  }
  WARN("interrupt to return (handle): " << seconds << " s");
  CHECK(e != GRPC_NO_ERROR);
  CHECK(Ninf_get_error() == NINF_ERR_CANCELLED);
  CHECK(seconds < kStopBoundSeconds);
  CHECK(StatDownTo(d, "running", 0, 10000));
  // The handle's executable is gone; its next call starts a new one.
  CHECK(grpc_call(&h, 16L, &sx, &sy, q) == GRPC_NO_ERROR);
  CHECK(sx != 0);
  CHECK(grpc_function_handle_destruct(&h) == GRPC_NO_ERROR);
  CHECK(grpc_finalize() == GRPC_NO_ERROR);
  CHECK(d.ZombieChildren() == 0);
}
