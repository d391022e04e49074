// The stub runtime's team (stubs/runtime/team.h) without MPI: two ranks in
// one process, rank 0 the test's thread and rank 1 a thread running
// ServeTeam, their `share` a queue of byte strings. Checks what reaches the
// other ranks for each kind of parameter, under both distributions, and
// how the team stops.
#include "stubs/runtime/team.h"

#include <catch2/catch.hpp>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/runtime/sample_interface.h"

namespace wire = ninf::wire;
using ninf::stub::ServeTeam;
using ninf::stub::ShareCall;
using ninf::stub::ShareExit;
using ninf::stub::ThreadsPerRank;

namespace {

// Broadcasts from rank 0 as a queue: rank 0 pushes, rank 1 pops.
struct Wire {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> messages;
};

int Share(void *context, void *buf, size_t bytes, int /*idle*/, int rank) {
  auto *w = static_cast<Wire *>(context);
  std::unique_lock<std::mutex> lock(w->mu);
  if (rank == 0) {
    w->messages.emplace_back(static_cast<const char *>(buf), bytes);
    w->cv.notify_all();
    return 0;
  }
  w->cv.wait(lock, [&] { return !w->messages.empty(); });
  std::string m = std::move(w->messages.front());
  w->messages.pop_front();
  if (m.size() != bytes) return -1;
  std::memcpy(buf, m.data(), bytes);
  return 0;
}
int ShareRank0(void *c, void *b, size_t n, int idle) { return Share(c, b, n, idle, 0); }
int ShareRank1(void *c, void *b, size_t n, int idle) { return Share(c, b, n, idle, 1); }

// f(IN long n, IN double x[n], INOUT double z[n], OUT double y[n], WORK double w[n])
wire::FunctionInterface Iface(const char *distribute) {
  wire::FunctionInterface iface = ninf::test::SampleInterface();
  iface.set_backend("MPI");
  iface.set_distribute(distribute);
  return iface;
}

// What rank 1's routine saw, per call.
struct Seen {
  long n = 0;
  bool null_arrays = false;
  std::vector<double> x, z, y, w;
};
std::vector<Seen> g_seen;  // written by rank 1's thread only, read after join

void Invoke(void **args) {
  Seen s;
  s.n = *static_cast<long *>(args[0]);
  s.null_arrays = args[1] == nullptr && args[2] == nullptr && args[3] == nullptr;
  if (!s.null_arrays) {
    auto copy = [&](int i) {
      const double *d = static_cast<const double *>(args[i]);
      return std::vector<double>(d, d + s.n);
    };
    s.x = copy(1);
    s.z = copy(2);
    s.y = copy(3);
    s.w = copy(4);
    for (int i = 3; i <= 4; ++i)  // dirty the buffers: the next call must see zeros
      for (long k = 0; k < s.n; ++k) static_cast<double *>(args[i])[k] = 99;
  }
  g_seen.push_back(std::move(s));
}

wire::Args Scalars(long n) {
  wire::Args a;
  a.add_scalars()->set_i(n);
  return a;
}

ninf::CallLayout Layout(long n) {
  ninf::CallLayout layout;
  layout.params.resize(5);
  for (int i = 1; i < 5; ++i) layout.params[i].bytes = static_cast<uint64_t>(n) * sizeof(double);
  return layout;
}

}  // namespace

TEST_CASE("team_broadcast_gives_every_rank_the_scalars_and_in_arrays", "[team]") {
  g_seen.clear();
  Wire w;
  const wire::FunctionInterface iface = Iface("");
  ninf_stub_team rank0{0, 2, &w, ShareRank0}, rank1{1, 2, &w, ShareRank1};
  int status = -1;
  std::thread other([&] { status = ServeTeam(iface, Invoke, &rank1); });
  std::vector<double> x = {1, 2, 3}, z = {4, 5, 6}, y(3, 7.0), wk(3, 8.0);
  std::vector<void *> argv = {nullptr, x.data(), z.data(), y.data(), wk.data()};
  REQUIRE(ShareCall(&rank0, iface, Scalars(3), 1, true, argv, Layout(3)).ok());
  std::vector<double> x2 = {9, 10};
  argv[1] = x2.data();
  REQUIRE(ShareCall(&rank0, iface, Scalars(2), 1, true, argv, Layout(2)).ok());
  // The same client again: its own earlier results may be seen, as on rank 0.
  REQUIRE(ShareCall(&rank0, iface, Scalars(2), 1, false, argv, Layout(2)).ok());
  ShareExit(&rank0, 3);
  other.join();
  CHECK(status == 3);  // rank 0's exit status
  REQUIRE(g_seen.size() == 3);
  CHECK(g_seen[2].y == std::vector<double>(2, 99.0));
  CHECK(g_seen[0].n == 3);
  CHECK(g_seen[0].x == x);
  CHECK(g_seen[0].z == z);
  CHECK(g_seen[0].y == std::vector<double>(3, 0.0));  // OUT and WORK start zeroed,
  CHECK(g_seen[0].w == std::vector<double>(3, 0.0));  // not with rank 0's bytes
  CHECK(g_seen[1].n == 2);
  CHECK(g_seen[1].x == x2);
  CHECK(g_seen[1].y == std::vector<double>(2, 0.0));  // a new client: the 99s are gone
  CHECK(g_seen[1].w == std::vector<double>(2, 0.0));
}

TEST_CASE("team_distribute_root_gives_the_other_ranks_null_arrays", "[team]") {
  g_seen.clear();
  Wire w;
  const wire::FunctionInterface iface = Iface("root");
  ninf_stub_team rank0{0, 2, &w, ShareRank0}, rank1{1, 2, &w, ShareRank1};
  std::thread other([&] { (void)ServeTeam(iface, Invoke, &rank1); });
  std::vector<double> x = {1, 2}, z = {3, 4}, y(2), wk(2);
  std::vector<void *> argv = {nullptr, x.data(), z.data(), y.data(), wk.data()};
  REQUIRE(ShareCall(&rank0, iface, Scalars(2), 4, true, argv, Layout(2)).ok());
  ShareExit(&rank0, 0);
  other.join();
  REQUIRE(g_seen.size() == 1);
  CHECK(g_seen[0].n == 2);
  CHECK(g_seen[0].null_arrays);
  CHECK(w.messages.empty());  // no array bytes were sent at all
}

TEST_CASE("team_threads_per_rank", "[team]") {
  ninf_stub_team two{0, 2, nullptr, ShareRank0}, one{0, 1, nullptr, ShareRank0};
  CHECK(ThreadsPerRank(4, &two) == 2);
  CHECK(ThreadsPerRank(1, &two) == 1);  // never 0
  CHECK(ThreadsPerRank(4, &one) == 4);
  CHECK(ThreadsPerRank(4, nullptr) == 4);
}
