// The Slurm launcher end to end: a real ninfd with `--launcher slurm`
// inside a real allocation of a single-node Slurm cluster (started by
// tests/slurm/slurm_test.sh, which runs this program with SLURM_CONF and
// SLURM_JOB_ID set), starting every executable as a Slurm step with srun.
// The routines of tests/e2e/mpi/mpi.idl report their ranks' pids, so the
// tests see from outside that steps are reused, and that a cancelled call,
// a step killed by scancel or a shutdown leaves no task behind.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "client/grpc.h"
#include "client/ninf.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/rank_pids.h"

namespace fs = std::filesystem;

namespace {

std::vector<std::string> SlurmArgs(const std::string &registry, const char *warm = "0") {
  return {"--registry",         registry, "--launcher",         "slurm", "--mpi-ranks",     "2",
          "--warm-executables", warm,     "--liveness-seconds", "1",     "--grace-seconds", "1"};
}

// What a shell command printed.
std::string Output(const std::string &command) {
  FILE *p = ::popen(command.c_str(), "r");
  std::string out;
  if (!p) return out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  ::pclose(p);
  return out;
}

// The ids (JOB.STEP) of this allocation's running steps named `name`.
std::vector<std::string> Steps(const std::string &name) {
  std::istringstream in(Output("squeue -h -s -o '%i %j'"));
  std::vector<std::string> ids;
  std::string id, step_name;
  while (in >> id >> step_name)
    if (step_name == name) ids.push_back(id);
  return ids;
}

bool WaitNoSteps(const std::string &name, int timeout_ms) {
  for (int waited = 0;; waited += 100) {
    if (Steps(name).empty()) return true;
    if (waited >= timeout_ms) {
      // What is left, for the failure's cause: each step's start and age
      // (squeue has no state column for steps: it refuses %T there, and
      // printed nothing when a CI run failed here), and the srun and
      // slurmstepd processes still there.
      UNSCOPED_INFO("steps left:\n"
                    << Output("squeue -h -s -o '%i %j %S %M'") << "processes:\n"
                    << Output("ps -eo pid,ppid,stat,etimes,args | grep -E 'srun|slurmstepd|stub' "
                              "| grep -v grep"));
      return false;
    }
    usleep(100000);
  }
}

// team on n ones.
Team CallTeam(const E2EDaemon &d, long n) {
  std::vector<double> x(static_cast<std::size_t>(n), 1.0);
  return ::CallTeam(d.Name("team"), x);
}

// A client of `hold` vanishes mid-call: every task and the step end, and
// the daemon goes on serving.
void ClientGoneLeavesNoTask(const E2EDaemon &d, const std::string &tag) {
  std::string dir = FreshPidDir(tag);
  std::vector<pid_t> ranks = HoldThenVanish(d.Name("hold"), dir, 2);
  REQUIRE(ranks.size() == 2);
  CHECK(WaitProcessesGone(ranks, 20000));
  CHECK(WaitNoSteps("hold", 20000));
  CHECK(CallTeam(d, 5).sums[1] == 5.0);
  fs::remove_all(dir);
}

}  // namespace

TEST_CASE("slurm_ordinary_and_mpi_functions_run_as_steps", "[slurm]") {
  REQUIRE(std::getenv("SLURM_JOB_ID"));
  E2EDaemon d({"--launcher", "slurm", "--mpi-ranks", "2", "--warm-executables", "0"});
  double sx = 0, sy = 0, q[10] = {};
  REQUIRE(Ninf_call(d.Name("ep").c_str(), 24L, &sx, &sy, q) == 0);
  CHECK(std::abs((sx + 3.247834652034740e+3) / 3.247834652034740e+3) <= 1e-8);
  CHECK(Steps("ep").size() == 1);  // the reused executable waits as a step
  double mx = 0, my = 0, mq[10] = {};
  REQUIRE(Ninf_call(d.Name("ep_mpi").c_str(), 24L, &mx, &my, mq) == 0);
  CHECK(std::abs((mx + 3.247834652034740e+3) / 3.247834652034740e+3) <= 1e-8);
  CHECK(std::abs((my + 6.958407078382297e+3) / 6.958407078382297e+3) <= 1e-8);
  for (int l = 0; l < 10; ++l) CHECK(mq[l] == q[l]);
  CHECK(Steps("ep_mpi").size() == 1);
}

TEST_CASE("slurm_a_handle_and_one_shot_calls_reuse_one_step", "[slurm]") {
  E2EDaemon d(SlurmArgs(MPI_REGISTRY_DIR));
  Team first = CallTeam(d, 10);
  CHECK(first.size == 2);
  CHECK(first.sums[1] == 10.0);
  for (int i = 0; i < 5; ++i) CHECK(CallTeam(d, 3).pids[1] == first.pids[1]);
  REQUIRE(grpc_initialize(nullptr) == GRPC_NO_ERROR);
  grpc_function_handle_t h;
  std::string host = "127.0.0.1:" + std::to_string(d.port());
  REQUIRE(grpc_function_handle_init(&h, host.data(), const_cast<char *>("team")) == GRPC_NO_ERROR);
  std::vector<double> x(4, 2.0);
  long handle_pid = 0;
  for (int i = 0; i < 20; ++i) {
    Team t;
    REQUIRE(grpc_call(&h, 4L, x.data(), &t.size, t.sums, t.pids) == GRPC_NO_ERROR);
    REQUIRE(t.sums[1] == 8.0);
    if (i == 0) handle_pid = t.pids[0];
    REQUIRE(t.pids[0] == handle_pid);
  }
  CHECK(grpc_function_handle_destruct(&h) == GRPC_NO_ERROR);
  CHECK(grpc_finalize() == GRPC_NO_ERROR);
  // One step for all of it: the handle took the one the one-shot calls
  // left waiting.
  CHECK(handle_pid == first.pids[0]);
  CHECK(d.Stat("executables_started") == 1);
}

TEST_CASE("slurm_client_gone_mid_call_leaves_no_task_behind", "[slurm]") {
  E2EDaemon d(SlurmArgs(MPI_REGISTRY_DIR));
  ClientGoneLeavesNoTask(d, "gone");
}

TEST_CASE("slurm_a_step_killed_by_scancel_fails_the_call", "[slurm]") {
  E2EDaemon d(SlurmArgs(MPI_REGISTRY_DIR));
  std::string dir = FreshPidDir("scancel");
  long done = 0;
  const int id = Ninf_call_async(d.Name("hold").c_str(), dir.c_str(), 60L, &done);
  REQUIRE(id >= 0);
  std::vector<pid_t> ranks = RankPids(dir, 2);
  REQUIRE(ranks.size() == 2);
  std::vector<std::string> steps = Steps("hold");
  REQUIRE(steps.size() == 1);
  REQUIRE(std::system(("scancel " + steps[0]).c_str()) == 0);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(Ninf_wait(id) != 0);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
  CHECK(done == 0);
  CHECK(WaitProcessesGone(ranks, 20000));
  CHECK(d.WaitForStat("failed", 1) >= 1);
  CHECK(CallTeam(d, 5).sums[1] == 5.0);  // a new step serves the next call
  CHECK(d.ZombieChildren() == 0);
  fs::remove_all(dir);
}

TEST_CASE("slurm_shutdown_leaves_no_step", "[slurm]") {
  std::string dir = FreshPidDir("stop");
  std::vector<pid_t> ranks;
  long done = 0;
  int id = -1;
  {
    E2EDaemon d(SlurmArgs(MPI_REGISTRY_DIR, "1"));
    CHECK(CallTeam(d, 2).size == 2);  // and a warm step besides
    id = Ninf_call_async(d.Name("hold").c_str(), dir.c_str(), 60L, &done);
    REQUIRE(id >= 0);
    ranks = RankPids(dir, 2);
    REQUIRE(ranks.size() == 2);
  }  // SIGTERM: running calls get grace_seconds, then are killed
  CHECK(Ninf_wait(id) != 0);
  CHECK(WaitProcessesGone(ranks, 20000));
  CHECK(WaitNoSteps("hold", 20000));
  CHECK(WaitNoSteps("team", 20000));
  fs::remove_all(dir);
}

TEST_CASE("slurm_steps_claim_over_tcp_and_clients_are_redirected", "[slurm]") {
  // launch_address (docs/cluster.md): what lets rank 0 run on a compute
  // node; here the node is this host, over loopback.
  std::vector<std::string> args = SlurmArgs(MPI_REGISTRY_DIR);
  args.insert(args.end(), {"--launch-address", "127.0.0.1"});
  E2EDaemon d(args);
  Team first = CallTeam(d, 100000);
  CHECK(first.size == 2);
  CHECK(first.sums[0] == 100000.0);
  CHECK(first.sums[1] == 100000.0);
  CHECK(CallTeam(d, 3).pids[0] == first.pids[0]);  // the step is reused
  CHECK(Steps("team").size() == 1);
  ClientGoneLeavesNoTask(d, "tcp-gone");
}
