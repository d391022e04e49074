// Backend "MPI" end to end: a real ninfd starting real Open MPI jobs of the
// executables ninf-gen built from tests/e2e/mpi/mpi.idl, called through
// libninf. The routines report from inside what their ranks saw (sizes,
// sums, pids), so the tests check from outside that every rank got the
// call, that handles and one-shot calls reuse one job, that ranks never
// outnumber the cores, and that a cancelled call, a killed rank or a
// shutdown leaves no rank behind.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "client/grpc.h"
#include "client/ninf.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/rank_pids.h"

namespace fs = std::filesystem;

namespace {

// Two ranks whatever the machine (oversubscribed on one core), no
// pre-started jobs: each test sees exactly the jobs its calls started.
std::vector<std::string> MpiArgs(std::vector<std::string> more = {}, const char *warm = "0") {
  std::vector<std::string> args = {"--registry", MPI_REGISTRY_DIR,      "--mpi-ranks",
                                   "2",          "--mpi-oversubscribe", "--warm-executables",
                                   warm,         "--liveness-seconds",  "1"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

}  // namespace

TEST_CASE("mpi_every_rank_gets_the_scalars_and_the_arrays", "[mpi]") {
  E2EDaemon d(MpiArgs());
  std::vector<double> x = Ramp(100000);  // 800 KB: several messages deep
  Team t = CallTeam(d.Name("team"), x);
  CHECK(t.size == 2);
  const double expected = 99999.0 * 100000.0 / 2;
  CHECK(t.sums[0] == expected);
  CHECK(t.sums[1] == expected);  // rank 1 summed its own copy
  CHECK(t.pids[0] > 0);
  CHECK(t.pids[1] > 0);
  CHECK(t.pids[0] != t.pids[1]);
  // A second one-shot call: the same job (reused), new arrays.
  std::vector<double> y(7, 1.0);
  Team u = CallTeam(d.Name("team"), y);
  CHECK(u.sums[0] == 7.0);
  CHECK(u.sums[1] == 7.0);
  CHECK(u.pids[0] == t.pids[0]);
  CHECK(u.pids[1] == t.pids[1]);
  CHECK(d.Stat("executables_started") == 1);
}

TEST_CASE("mpi_distribute_root_gives_the_other_ranks_no_arrays", "[mpi]") {
  E2EDaemon d(MpiArgs());
  std::vector<double> x = Ramp(1000), y(1000, -1.0);
  long nulls = -1;
  REQUIRE(Ninf_call(d.Name("doubled").c_str(), 1000L, x.data(), y.data(), &nulls) == 0);
  CHECK(nulls == 1);  // rank 1 got null pointers, rank 0 the arrays
  for (std::size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == 2.0 * static_cast<double>(i));
}

TEST_CASE("mpi_handle_starts_mpirun_once_for_twenty_calls", "[mpi]") {
  E2EDaemon d(MpiArgs());
  REQUIRE(grpc_initialize(nullptr) == GRPC_NO_ERROR);
  grpc_function_handle_t h;
  std::string host = "127.0.0.1:" + std::to_string(d.port());
  REQUIRE(grpc_function_handle_init(&h, host.data(), const_cast<char *>("team")) == GRPC_NO_ERROR);
  std::vector<double> x = Ramp(64);
  long first_pid = 0;
  for (int i = 0; i < 20; ++i) {
    Team t;
    REQUIRE(grpc_call(&h, 64L, x.data(), &t.size, t.sums, t.pids) == GRPC_NO_ERROR);
    REQUIRE(t.size == 2);
    REQUIRE(t.sums[1] == 63.0 * 64.0 / 2);
    if (i == 0) first_pid = t.pids[0];
    REQUIRE(t.pids[0] == first_pid);
  }
  CHECK(grpc_function_handle_destruct(&h) == GRPC_NO_ERROR);
  CHECK(grpc_finalize() == GRPC_NO_ERROR);
  CHECK(d.Stat("executables_started") == 1);
}

TEST_CASE("mpi_admission_never_runs_more_ranks_than_cores", "[mpi]") {
  // Slots are not the limit here (4), cores are: on 2 cores two 2-rank
  // jobs would oversubscribe, so calls run one after another.
  E2EDaemon d(MpiArgs({"--slots", "4"}, "1"));
  const long cores = d.Stat("cores");
  REQUIRE(cores >= 1);
  std::vector<std::string> dirs;
  std::vector<long> done(3, 0);
  std::vector<int> ids;
  for (int i = 0; i < 3; ++i) {
    dirs.push_back(FreshPidDir("adm" + std::to_string(i)));
    int id = Ninf_call_async(d.Name("hold").c_str(), dirs.back().c_str(), 1L, &done[i]);
    REQUIRE(id >= 0);
    ids.push_back(id);
  }
  long most_running = 0, most_threads = 0;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (d.Stat("completed") < 3 && std::chrono::steady_clock::now() < until) {
    most_running = std::max(most_running, d.Stat("running"));
    most_threads = std::max(most_threads, d.Stat("threads_held"));
    usleep(20000);
  }
  for (int id : ids) CHECK(Ninf_wait(id) == 0);
  for (long v : done) CHECK(v == 1);
  CHECK(most_threads <= cores);
  CHECK(most_running <= std::max(1L, cores / 2));
  for (const std::string &dir : dirs) fs::remove_all(dir);
}

TEST_CASE("mpi_client_gone_mid_call_leaves_no_rank_behind", "[mpi]") {
  E2EDaemon d(MpiArgs());
  std::string dir = FreshPidDir("gone");
  std::vector<pid_t> ranks = HoldThenVanish(d.Name("hold"), dir, 2);
  REQUIRE(ranks.size() == 2);
  CHECK(WaitProcessesGone(ranks, 15000));
  CHECK(d.WaitForStat("cancelled", 1) >= 1);
  // Still serving, and nothing unreaped.
  std::vector<double> x = Ramp(10);
  CHECK(CallTeam(d.Name("team"), x).sums[1] == 45.0);
  CHECK(d.ZombieChildren() == 0);
  fs::remove_all(dir);
}

TEST_CASE("mpi_a_rank_killed_mid_call_fails_the_call_and_takes_the_job_down", "[mpi]") {
  E2EDaemon d(MpiArgs());
  std::string dir = FreshPidDir("kill");
  long done = 0;
  const int id = Ninf_call_async(d.Name("hold").c_str(), dir.c_str(), 60L, &done);
  REQUIRE(id >= 0);
  std::vector<pid_t> ranks = RankPids(dir, 2);
  REQUIRE(ranks.size() == 2);
  REQUIRE(::kill(ranks[1], SIGKILL) == 0);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(Ninf_wait(id) != 0);  // an error, not a hang
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
  CHECK(done == 0);
  CHECK(WaitProcessesGone(ranks, 15000));
  CHECK(d.WaitForStat("failed", 1) >= 1);
  std::vector<double> x = Ramp(10);
  CHECK(CallTeam(d.Name("team"), x).sums[1] == 45.0);
  CHECK(d.ZombieChildren() == 0);
  fs::remove_all(dir);
}

TEST_CASE("mpi_wall_clock_limit_kills_every_rank", "[mpi]") {
  E2EDaemon d(MpiArgs({"--call-wall-seconds", "2"}));
  std::string dir = FreshPidDir("wall");
  long done = 0;
  const int id = Ninf_call_async(d.Name("hold").c_str(), dir.c_str(), 60L, &done);
  REQUIRE(id >= 0);
  std::vector<pid_t> ranks = RankPids(dir, 2);
  REQUIRE(ranks.size() == 2);
  CHECK(Ninf_wait(id) != 0);
  CHECK(Ninf_get_error() == NINF_ERR_LIMIT);
  CHECK(WaitProcessesGone(ranks, 15000));
  fs::remove_all(dir);
}

TEST_CASE("mpi_shutdown_leaves_no_rank_behind", "[mpi]") {
  std::string dir = FreshPidDir("stop");
  std::vector<pid_t> ranks;
  int id = -1;
  long done = 0;
  {
    E2EDaemon d(MpiArgs({"--grace-seconds", "0"}));
    id = Ninf_call_async(d.Name("hold").c_str(), dir.c_str(), 60L, &done);
    REQUIRE(id >= 0);
    ranks = RankPids(dir, 2);
    REQUIRE(ranks.size() == 2);
  }  // SIGTERM; the fixture checks that ninfd exits 0
  CHECK(WaitProcessesGone(ranks, 15000));
  CHECK(Ninf_wait(id) != 0);
  fs::remove_all(dir);
}

TEST_CASE("mpi_more_ranks_than_cores_is_refused_at_start_without_oversubscribe", "[mpi]") {
  const long cores = static_cast<long>(std::thread::hardware_concurrency());
  // The fixture's daemon must start, so ask the daemon directly.
  std::string cmd = std::string(std::getenv("NINFD")) + " --port 0 --mpi-ranks " +
                    std::to_string(cores + 1) + " 2>&1";
  FILE *p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int status = ::pclose(p);
  CHECK(WEXITSTATUS(status) != 0);
  CHECK_THAT(out, Catch::Contains("mpi_ranks") && Catch::Contains("mpi_oversubscribe"));
}

// The standard library's parallel routines, from the build tree's registry.
namespace {

std::vector<std::string> StdlibArgs(const char *ranks) {
  return {"--mpi-ranks", ranks, "--mpi-oversubscribe", "--warm-executables", "0"};
}

// NAS EP's sums of classes S (m = 24) and W (m = 25), relative 1e-8.
bool NasVerified(long m, double sx, double sy) {
  const double ref_x = m == 24 ? -3.247834652034740e+3 : -2.863319731645753e+3;
  const double ref_y = m == 24 ? -6.958407078382297e+3 : -6.320053679109499e+3;
  return std::abs((sx - ref_x) / ref_x) <= 1e-8 && std::abs((sy - ref_y) / ref_y) <= 1e-8;
}

}  // namespace

TEST_CASE("mpi_ep_mpi_with_one_and_two_ranks_equals_nas_s_and_w", "[mpi][stdlib]") {
  for (const char *ranks : {"1", "2"}) {
    E2EDaemon d(StdlibArgs(ranks));
    for (long m : {24L, 25L}) {
      INFO("ranks " << ranks << ", m = " << m);
      double sx = 0, sy = 0, q[10] = {}, q_ep[10] = {}, sx_ep = 0, sy_ep = 0;
      REQUIRE(Ninf_call(d.Name("ep_mpi").c_str(), m, &sx, &sy, q) == 0);
      CHECK(NasVerified(m, sx, sy));
      // The counts are exact integers: the same as the one-process ep's.
      REQUIRE(Ninf_call(d.Name("ep").c_str(), m, &sx_ep, &sy_ep, q_ep) == 0);
      for (int l = 0; l < 10; ++l) CHECK(q[l] == q_ep[l]);
    }
  }
}

TEST_CASE("mpi_pdgesv_solves_as_dgesv_does", "[mpi][stdlib]") {
  E2EDaemon d(StdlibArgs("2"));
  for (int n : {1, 7, 300}) {
    INFO("n = " << n);
    const int lda = n + 3, nrhs = 2, ldb = n + 1;
    std::vector<double> a0(static_cast<std::size_t>(lda) * n),
        b0(static_cast<std::size_t>(ldb) * nrhs);
    unsigned seed = 12345u + static_cast<unsigned>(n);
    for (double &v : a0) v = static_cast<double>(rand_r(&seed)) / RAND_MAX - 0.5;
    for (double &v : b0) v = static_cast<double>(rand_r(&seed)) / RAND_MAX - 0.5;
    std::vector<double> a = a0, b = b0, a_ref = a0, b_ref = b0;
    std::vector<int> ipiv(static_cast<std::size_t>(n)), ipiv_ref(static_cast<std::size_t>(n));
    int info = -1, info_ref = -1;
    REQUIRE(Ninf_call(d.Name("pdgesv").c_str(), n, nrhs, a.data(), lda, ipiv.data(), b.data(), ldb,
                      &info) == 0);
    REQUIRE(Ninf_call(d.Name("dgesv").c_str(), n, nrhs, a_ref.data(), lda, ipiv_ref.data(),
                      b_ref.data(), ldb, &info_ref) == 0);
    CHECK(info == 0);
    CHECK(info_ref == 0);
    CHECK(ipiv == ipiv_ref);  // the same pivots, as LAPACK numbers them
    // The scaled residual of each solution, ||A x - b|| / (||A|| ||x|| n eps).
    double anorm = 0, worst = 0;
    for (int i = 0; i < n; ++i) {
      double row = 0;
      for (int j = 0; j < n; ++j) row += std::abs(a0[static_cast<std::size_t>(j) * lda + i]);
      anorm = std::max(anorm, row);
    }
    for (int r = 0; r < nrhs; ++r) {
      double xnorm = 0, rnorm = 0;
      for (int i = 0; i < n; ++i)
        xnorm = std::max(xnorm, std::abs(b[static_cast<std::size_t>(r) * ldb + i]));
      for (int i = 0; i < n; ++i) {
        double s = -b0[static_cast<std::size_t>(r) * ldb + i];
        for (int j = 0; j < n; ++j)
          s += a0[static_cast<std::size_t>(j) * lda + i] * b[static_cast<std::size_t>(r) * ldb + j];
        rnorm = std::max(rnorm, std::abs(s));
      }
      worst = std::max(worst, rnorm / (anorm * xnorm * n * 2.220446049250313e-16));
    }
    CHECK(worst < 16);
    // Padding rows beyond n are the caller's and come back untouched.
    if (n > 1) CHECK(b[static_cast<std::size_t>(n)] == b0[static_cast<std::size_t>(n)]);
  }
}
