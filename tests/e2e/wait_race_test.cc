// Many threads waiting on the same asynchronous calls, and grpc_finalize
// racing the waits (issue 28, H2), against the real ninfd: each call's
// result goes to exactly one wait, every other wait gets the documented
// error (NINF_ERR_INVALID_ID / GRPC_INVALID_SESSION_ID), nothing hangs and
// nothing is freed twice. Runs in the release suite and under ASan and TSan
// in CI (scripts/sanitize.sh).
//
// Catch2 v2's assertions are not thread-safe: the threads only record what
// they saw, and the main thread checks it after joining them.
#include <catch2/catch.hpp>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/grpc.h"
#include "client/ninf.h"
#include "tests/e2e/e2e_fixture.h"

namespace {

constexpr int kThreads = 8;
constexpr int kCalls = 6;
constexpr int kRounds = 4;
// ep with m = 20 takes some tens of milliseconds: every waiter is blocked
// on the call before it ends, which is when the old table broke.
constexpr long kShortEp = 20;
// m = 24 (~0.3 s): still running when grpc_finalize cancels it.
constexpr long kLongEp = 24;

char *C(const std::string &s) { return const_cast<char *>(s.c_str()); }

// Lets the threads go at once, so that they wait together.
class Gate {
 public:
  void Pass() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return open_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
};

// The arrays of one ep call.
struct EpCall {
  double sx = 0, sy = 0, q[10] = {};
};

// What one wait returned and the calling thread's last error after it.
struct Outcome {
  int rc = 0;
  int error = 0;
  int id = -1;  // the call a wait-any collected
};

// kCalls asynchronous ep(m) calls into `calls`; their ids.
std::vector<int> StartEps(const std::string &ep, long m, std::vector<EpCall> &calls) {
  calls.assign(kCalls, EpCall{});
  std::vector<int> ids(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    ids[i] = Ninf_call_async(ep.c_str(), m, &calls[i].sx, &calls[i].sy, calls[i].q);
    REQUIRE(ids[i] >= 0);
  }
  return ids;
}

// Runs waiter(t) on kThreads threads let go together; `meanwhile` runs on
// this thread once they are let go, before they are joined.
void RaceWaiters(const std::function<void(int)> &waiter,
                 const std::function<void()> &meanwhile = {}) {
  Gate gate;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      gate.Pass();
      waiter(t);
    });
  gate.Open();
  if (meanwhile) meanwhile();
  for (std::thread &t : threads) t.join();
}

}  // namespace

TEST_CASE("wait_race_ninf_wait_same_ids", "[waitrace]") {
  E2EDaemon d;
  const std::string ep = d.Name("ep");
  for (int round = 0; round < kRounds; ++round) {
    std::vector<EpCall> calls;
    const std::vector<int> ids = StartEps(ep, kShortEp, calls);
    // seen[thread][call]: every thread waits for every call, each starting
    // at another one.
    std::vector<std::vector<Outcome>> seen(kThreads, std::vector<Outcome>(kCalls));
    RaceWaiters([&](int t) {
      for (int k = 0; k < kCalls; ++k) {
        const int i = (t + k) % kCalls;
        seen[t][i].rc = Ninf_wait(ids[i]);
        seen[t][i].error = Ninf_get_error();
      }
    });
    for (int i = 0; i < kCalls; ++i) {
      int results = 0;
      for (int t = 0; t < kThreads; ++t) {
        if (seen[t][i].rc == 0) {
          ++results;
        } else {
          CHECK(seen[t][i].rc == -1);
          CHECK(seen[t][i].error == NINF_ERR_INVALID_ID);
        }
      }
      CHECK(results == 1);
      CHECK(calls[i].sx == calls[0].sx);  // same m, same generator: same sums
      CHECK(calls[i].sy == calls[0].sy);
    }
    CHECK(calls[0].sx != 0);
    // A later wait says the call was collected, by whom does not matter.
    CHECK(Ninf_wait(ids[0]) == -1);
    CHECK(Ninf_get_error() == NINF_ERR_INVALID_ID);
    CHECK(std::string(Ninf_get_error_detail()).find("already collected") != std::string::npos);
  }
}

TEST_CASE("wait_race_ninf_wait_any_all_and_one", "[waitrace]") {
  E2EDaemon d;
  const std::string ep = d.Name("ep");
  for (int round = 0; round < kRounds; ++round) {
    std::vector<EpCall> calls;
    const std::vector<int> ids = StartEps(ep, kShortEp, calls);
    // Threads 0, 3, 6: Ninf_wait_any until nothing is left; 1, 4, 7:
    // Ninf_wait_all; 2, 5: Ninf_wait on every id.
    std::vector<std::vector<Outcome>> seen(kThreads);
    RaceWaiters([&](int t) {
      std::vector<Outcome> &mine = seen[t];
      if (t % 3 == 0) {
        for (;;) {
          Outcome o;
          o.rc = Ninf_wait_any(&o.id);
          o.error = Ninf_get_error();
          mine.push_back(o);
          if (o.rc != 0) break;
        }
      } else if (t % 3 == 1) {
        Outcome o;
        o.rc = Ninf_wait_all();
        o.error = Ninf_get_error();
        mine.push_back(o);
      } else {
        for (int i : ids) {
          Outcome o;
          o.id = i;
          o.rc = Ninf_wait(i);
          o.error = Ninf_get_error();
          mine.push_back(o);
        }
      }
    });
    // No call is reported collected twice; the failures are the defined one.
    std::multiset<int> collected;
    for (int t = 0; t < kThreads; ++t)
      for (const Outcome &o : seen[t]) {
        if (o.rc == 0) {
          if (t % 3 != 1) collected.insert(o.id);
        } else {
          CHECK(o.rc == -1);
          CHECK(o.error == NINF_ERR_INVALID_ID);
        }
      }
    for (int i : ids) CHECK(collected.count(i) <= 1);
    for (int t = 1; t < kThreads; t += 3) CHECK(seen[t].back().rc == 0);  // wait_all: all good
    for (const EpCall &c : calls) CHECK(c.sx == calls[0].sx);
    int none = 5;
    CHECK(Ninf_wait_any(&none) == -1);  // every call was collected by somebody
    CHECK(none == -1);
  }
}

TEST_CASE("wait_race_grpc_waits", "[waitrace]") {
  E2EDaemon d;
  const std::string server = "127.0.0.1:" + std::to_string(d.port());
  REQUIRE(grpc_initialize(nullptr) == GRPC_NO_ERROR);
  std::vector<grpc_function_handle_t> handles(kCalls);
  for (grpc_function_handle_t &h : handles)
    REQUIRE(grpc_function_handle_init(&h, C(server), C("ep")) == GRPC_NO_ERROR);
  for (int round = 0; round < kRounds; ++round) {
    std::vector<EpCall> calls(kCalls);
    std::vector<grpc_sessionid_t> ids(kCalls);
    for (int i = 0; i < kCalls; ++i)
      REQUIRE(grpc_call_async(&handles[i], &ids[i], kShortEp, &calls[i].sx, &calls[i].sy,
                              calls[i].q) == GRPC_NO_ERROR);
    // Thread t % 5: 0 grpc_wait on each, 1 grpc_wait_and, 2 grpc_wait_or
    // until refused, 3 grpc_wait_all, 4 grpc_wait_any until none is left.
    std::vector<std::vector<Outcome>> seen(kThreads);
    RaceWaiters([&](int t) {
      std::vector<Outcome> &mine = seen[t];
      std::vector<grpc_sessionid_t> set = ids;
      Outcome o;
      switch (t % 5) {
        case 0:
          for (grpc_sessionid_t id : ids) {
            o.id = id;
            o.rc = grpc_wait(id);
            mine.push_back(o);
          }
          break;
        case 1:
          o.rc = grpc_wait_and(set.data(), set.size());
          mine.push_back(o);
          break;
        case 2:
          do {
            o.rc = grpc_wait_or(set.data(), set.size(), &o.id);
            mine.push_back(o);
          } while (o.rc == GRPC_NO_ERROR);
          break;
        case 3:
          o.rc = grpc_wait_all();
          mine.push_back(o);
          break;
        default:
          do {
            o.rc = grpc_wait_any(&o.id);
            mine.push_back(o);
          } while (o.id != GRPC_SESSIONID_VOID);
          break;
      }
    });
    std::multiset<int> collected;
    for (int t = 0; t < kThreads; ++t)
      for (const Outcome &o : seen[t]) {
        CHECK((o.rc == GRPC_NO_ERROR || o.rc == GRPC_INVALID_SESSION_ID));
        const bool names_its_call = t % 5 == 0 || t % 5 == 2 || t % 5 == 4;
        if (o.rc == GRPC_NO_ERROR && names_its_call && o.id != GRPC_SESSIONID_VOID)
          collected.insert(o.id);
      }
    for (grpc_sessionid_t id : ids) {
      CHECK(collected.count(id) <= 1);
      CHECK(grpc_get_error(id) == GRPC_NO_ERROR);  // its code outlives the wait
    }
    for (const EpCall &c : calls) CHECK(c.sx == calls[0].sx);
    grpc_sessionid_t failed = 0;
    CHECK(grpc_get_failed_sessionid(&failed) == GRPC_NO_ERROR);
    CHECK(failed == GRPC_SESSIONID_VOID);  // a lost race is no failed session
    grpc_sessionid_t none = 0;
    CHECK(grpc_wait_any(&none) == GRPC_NO_ERROR);
    CHECK(none == GRPC_SESSIONID_VOID);
  }
  for (grpc_function_handle_t &h : handles) CHECK(grpc_function_handle_destruct(&h) == 0);
  CHECK(grpc_finalize() == GRPC_NO_ERROR);
}

TEST_CASE("wait_race_finalize_during_waits", "[waitrace]") {
  E2EDaemon d;
  const std::string server = "127.0.0.1:" + std::to_string(d.port());
  const std::string ep = d.Name("ep");
  for (int round = 0; round < kRounds; ++round) {
    REQUIRE(grpc_initialize(nullptr) == GRPC_NO_ERROR);
    // Half the calls on handles, half through Ninf_call_async: the session
    // table is shared, and grpc_finalize cancels and waits for all of them.
    std::vector<EpCall> calls(kCalls);
    std::vector<int> ids(kCalls);
    for (int i = 0; i < kCalls; ++i) {
      if (i % 2 == 0) {
        grpc_function_handle_t h;
        REQUIRE(grpc_function_handle_init(&h, C(server), C("ep")) == GRPC_NO_ERROR);
        REQUIRE(grpc_call_async(&h, &ids[i], kLongEp, &calls[i].sx, &calls[i].sy, calls[i].q) ==
                GRPC_NO_ERROR);
        // The running session keeps the handle's executable until it ends.
        REQUIRE(grpc_function_handle_destruct(&h) == GRPC_NO_ERROR);
      } else {
        ids[i] = Ninf_call_async(ep.c_str(), kLongEp, &calls[i].sx, &calls[i].sy, calls[i].q);
        REQUIRE(ids[i] >= 0);
      }
    }
    // Thread t % 4: 0 grpc_wait on each, 1 Ninf_wait on each, 2
    // grpc_wait_all, 3 Ninf_wait_any until refused.
    std::vector<std::vector<Outcome>> seen(kThreads);
    grpc_error_t finalized = static_cast<grpc_error_t>(-1);  // set by the finalize below
    RaceWaiters(
        [&](int t) {
          std::vector<Outcome> &mine = seen[t];
          Outcome o;
          switch (t % 4) {
            case 0:
              for (int id : ids) {
                o.id = id;
                o.rc = grpc_wait(id);
                mine.push_back(o);
              }
              break;
            case 1:
              for (int id : ids) {
                o.id = id;
                o.rc = Ninf_wait(id);
                o.error = Ninf_get_error();
                mine.push_back(o);
              }
              break;
            case 2:
              o.rc = grpc_wait_all();
              mine.push_back(o);
              break;
            default:
              do {
                o.rc = Ninf_wait_any(&o.id);
                o.error = Ninf_get_error();
                mine.push_back(o);
              } while (o.rc == 0 || o.error == NINF_ERR_CANCELLED);
              break;
          }
        },
        [&] { finalized = grpc_finalize(); });
    CHECK(finalized == GRPC_NO_ERROR);
    // A wait that got a call's outcome (its result or its cancellation)
    // names it; no call has two.
    std::multiset<int> collected;
    for (int t = 0; t < kThreads; ++t)
      for (const Outcome &o : seen[t]) {
        bool got_outcome = false;
        if (t % 4 == 0) {
          CHECK((o.rc == GRPC_NO_ERROR || o.rc == GRPC_SESSION_FAILED ||
                 o.rc == GRPC_INVALID_SESSION_ID || o.rc == GRPC_NOT_INITIALIZED));
          got_outcome = o.rc == GRPC_NO_ERROR || o.rc == GRPC_SESSION_FAILED;
        } else if (t % 4 == 2) {
          CHECK((o.rc == GRPC_NO_ERROR || o.rc == GRPC_SESSION_FAILED ||
                 o.rc == GRPC_NOT_INITIALIZED));
        } else {
          CHECK((o.rc == 0 || (o.rc == -1 &&
                               (o.error == NINF_ERR_CANCELLED || o.error == NINF_ERR_INVALID_ID))));
          got_outcome = o.rc == 0 || o.error == NINF_ERR_CANCELLED;
        }
        if (got_outcome) collected.insert(o.id);
      }
    for (int id : ids) CHECK(collected.count(id) <= 1);
    int none = 5;
    CHECK(Ninf_wait_any(&none) == -1);  // finalize left nothing outstanding
  }
  // The library is whole afterwards: a new session works.
  REQUIRE(grpc_initialize(nullptr) == GRPC_NO_ERROR);
  EpCall c;
  CHECK(Ninf_call(ep.c_str(), kShortEp, &c.sx, &c.sy, c.q) == 0);
  CHECK(c.sx != 0);
  CHECK(grpc_finalize() == GRPC_NO_ERROR);
}
