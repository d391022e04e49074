// MPI executables whose ranks run on "another host" (tests/e2e/remote_ranks.sh
// makes a network namespace for them): ninfd here with `launch_address` on
// the veth, mpirun started inside the namespace. Rank 0 claims its control
// channel over TCP, clients are redirected to its own address, and the test
// checks from outside that the ranks ran in the namespace, that one job
// serves many calls, that arrays arrive whole across the link, and that a
// vanished client, a shutdown or a two-phase call behave as documented.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "client/grpc.h"
#include "client/ninf.h"
#include "ninf.pb.h"
#include "protocol/frame.h"
#include "protocol/wire.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/rank_pids.h"

namespace fs = std::filesystem;

namespace {

std::string Env(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

// The pids running in the test's namespace now.
std::vector<pid_t> NamespacePids() {
  std::vector<pid_t> pids;
  const std::string cmd = "ip netns pids " + Env("NINF_TEST_NETNS") + " 2>/dev/null";
  FILE *p = ::popen(cmd.c_str(), "r");
  if (!p) return pids;
  long pid = 0;
  while (std::fscanf(p, "%ld", &pid) == 1) pids.push_back(static_cast<pid_t>(pid));
  ::pclose(p);
  return pids;
}

bool InNamespace(long pid) {
  const std::vector<pid_t> pids = NamespacePids();
  return std::find(pids.begin(), pids.end(), static_cast<pid_t>(pid)) != pids.end();
}

// ninfd here, its MPI jobs in the namespace, two ranks, none pre-started.
std::vector<std::string> RemoteArgs(std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"--mpi-ranks",
                                   "2",
                                   "--mpi-oversubscribe",
                                   "--warm-executables",
                                   "0",
                                   "--liveness-seconds",
                                   "1",
                                   "--launch-address",
                                   Env("NINF_TEST_LAUNCH_ADDRESS"),
                                   "--mpirun",
                                   "ip netns exec " + Env("NINF_TEST_NETNS") + " mpirun"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::vector<std::string> TestRegistry() { return {"--registry", MPI_REGISTRY_DIR}; }

}  // namespace

TEST_CASE("remote_ranks_run_on_the_other_host_and_serve_many_calls", "[remote]") {
  REQUIRE(!Env("NINF_TEST_NETNS").empty());
  E2EDaemon d(RemoteArgs(TestRegistry()));
  std::vector<double> x = Ramp(1000000);  // 8 MB across the link, both ways of the call
  Team t = CallTeam(d.Name("team"), x);
  CHECK(t.size == 2);
  const double expected = 999999.0 * 1000000.0 / 2;
  CHECK(t.sums[0] == expected);
  CHECK(t.sums[1] == expected);
  CHECK(InNamespace(t.pids[0]));  // rank 0 too: the client reached it there
  CHECK(InNamespace(t.pids[1]));
  // One-shot calls reuse the job.
  std::vector<double> y(7, 1.0);
  Team u = CallTeam(d.Name("team"), y);
  CHECK(u.sums[1] == 7.0);
  CHECK(u.pids[0] == t.pids[0]);
  // Distribute "root" and OUT arrays back from rank 0.
  std::vector<double> in = Ramp(5000), out(5000, -1.0);
  long nulls = -1;
  REQUIRE(Ninf_call(d.Name("doubled").c_str(), 5000L, in.data(), out.data(), &nulls) == 0);
  CHECK(nulls == 1);
  for (std::size_t i = 0; i < out.size(); ++i) REQUIRE(out[i] == 2.0 * static_cast<double>(i));
  // A handle: twenty calls, one job.
  REQUIRE(grpc_initialize(nullptr) == GRPC_NO_ERROR);
  grpc_function_handle_t h;
  std::string host = "127.0.0.1:" + std::to_string(d.port());
  REQUIRE(grpc_function_handle_init(&h, host.data(), const_cast<char *>("team")) == GRPC_NO_ERROR);
  std::vector<double> z = Ramp(64);
  for (int i = 0; i < 20; ++i) {
    Team v;
    REQUIRE(grpc_call(&h, 64L, z.data(), &v.size, v.sums, v.pids) == GRPC_NO_ERROR);
    REQUIRE(v.sums[1] == 63.0 * 64.0 / 2);
    // The job the one-shot calls left waiting serves the handle.
    REQUIRE(v.pids[0] == t.pids[0]);
  }
  CHECK(grpc_function_handle_destruct(&h) == GRPC_NO_ERROR);
  CHECK(grpc_finalize() == GRPC_NO_ERROR);
  // team's job and doubled's: one each for 23 calls.
  CHECK(d.Stat("executables_started") == 2);
  CHECK(d.Stat("failed") == 0);
}

TEST_CASE("remote_ranks_client_gone_mid_call_leaves_no_rank_behind", "[remote]") {
  E2EDaemon d(RemoteArgs(TestRegistry()));
  std::string dir = FreshPidDir("remote-gone");
  std::vector<pid_t> ranks = HoldThenVanish(d.Name("hold"), dir, 2);
  REQUIRE(ranks.size() == 2);
  CHECK(InNamespace(ranks[0]));
  CHECK(WaitProcessesGone(ranks, 15000));
  CHECK(d.WaitForStat("cancelled", 1) >= 1);
  std::vector<double> x = Ramp(10);
  CHECK(CallTeam(d.Name("team"), x).sums[1] == 45.0);
  CHECK(d.ZombieChildren() == 0);
  fs::remove_all(dir);
}

TEST_CASE("remote_ranks_shutdown_leaves_nothing_in_the_namespace", "[remote]") {
  std::string dir = FreshPidDir("remote-stop");
  std::vector<pid_t> ranks;
  int id = -1;
  long done = 0;
  {
    E2EDaemon d(RemoteArgs({"--grace-seconds", "0", "--registry", MPI_REGISTRY_DIR}));
    id = Ninf_call_async(d.Name("hold").c_str(), dir.c_str(), 60L, &done);
    REQUIRE(id >= 0);
    ranks = RankPids(dir, 2);
    REQUIRE(ranks.size() == 2);
  }  // SIGTERM; the fixture checks that ninfd exits 0
  CHECK(WaitProcessesGone(ranks, 15000));
  CHECK(Ninf_wait(id) != 0);
  for (int i = 0; i < 100 && !NamespacePids().empty(); ++i) ::usleep(100000);
  CHECK(NamespacePids().empty());  // mpirun and its daemons too
  fs::remove_all(dir);
}

TEST_CASE("remote_ranks_refuse_two_phase_calls_with_a_reason", "[remote]") {
  E2EDaemon d(RemoteArgs(TestRegistry()));
  std::vector<double> x = Ramp(10);
  Team t;
  Ninf_ticket ticket;
  CHECK(Ninf_call_submit(&ticket, d.Name("team").c_str(), 10L, x.data(), &t.size, t.sums, t.pids) !=
        0);
  CHECK(Ninf_get_error() == NINF_ERR_NOT_SUPPORTED);
  CHECK_THAT(std::string(Ninf_get_error_detail()), Catch::Contains("launch_address"));
  // The refusal costs nothing: calls go on.
  CHECK(CallTeam(d.Name("team"), x).sums[0] == 45.0);
}

TEST_CASE("remote_ranks_ep_mpi_equals_nas_s", "[remote][stdlib]") {
  E2EDaemon d(RemoteArgs());
  double sx = 0, sy = 0, q[10] = {};
  REQUIRE(Ninf_call(d.Name("ep_mpi").c_str(), 24L, &sx, &sy, q) == 0);
  CHECK(std::abs((sx + 3.247834652034740e+3) / 3.247834652034740e+3) <= 1e-8);
  CHECK(std::abs((sy + 6.958407078382297e+3) / 6.958407078382297e+3) <= 1e-8);
}

TEST_CASE("remote_ranks_a_client_that_ignores_its_redirect_costs_no_restart", "[remote]") {
  E2EDaemon d(RemoteArgs({"--registry", MPI_REGISTRY_DIR, "--request-timeout-seconds", "1"}));
  std::vector<double> x = Ramp(10);
  const long pid = CallTeam(d.Name("team"), x).pids[0];
  // CALL, then nothing: the redirect is never followed.
  int fd = -1;
  REQUIRE(ninf::ConnectTcp("127.0.0.1", d.port(), 5000, &fd).ok());
  ninf::Channel ch(fd, 10000);
  ninf::wire::CallRequest req;
  req.set_name("team");
  req.set_call_id(4242);
  REQUIRE(ch.SendFrame(ninf::FRAME_CALL, &req).ok());
  ninf::wire::Redirect redirect;
  ninf::FrameHeader h;
  REQUIRE(ch.RecvReply(ninf::FRAME_REDIRECT, 0, &redirect, &h).ok());
  CHECK(redirect.host() == Env("NINF_TEST_NODE_ADDRESS"));  // rank 0's own address
  CHECK(redirect.token().size() == 16);
  CHECK(d.WaitForStat("failed", 1) == 1);  // after request_timeout_seconds
  // The job waits for calls again: the next one is served by the same ranks.
  CHECK(CallTeam(d.Name("team"), x).pids[0] == pid);
  CHECK(d.Stat("executables_started") == 1);
}

// The bytes a redirected call puts on the link, recorded on the veth by
// remote_ranks.sh (tests/e2e/wire_sniff.py): the launch channel of rank 0
// and the client's connection to it, each way. Run by the script once in
// plaintext, and once with NINF_TEST_TLS_DIR (ninfd with that site's
// certificate, the client with NINF_TLS_CA). The arrays are one pattern
// the capture is searched for; rank 0's launch token, which must never
// cross, goes to the file NINF_TEST_WIRE_TOKEN.
TEST_CASE("remote_ranks_wire", "[.wire]") {
  std::vector<std::string> more = TestRegistry();
  const std::string pki = Env("NINF_TEST_TLS_DIR");
  if (!pki.empty())
    more.insert(more.end(), {"--tls-cert", pki + "/server.pem", "--tls-key", pki + "/server.key"});
  E2EDaemon d(RemoteArgs(more));
  constexpr double kPattern = 1234.5678;
  std::vector<double> x(1000000, kPattern);  // 8 MB to rank 0
  Team t = CallTeam(d.Name("team"), x);
  REQUIRE(t.size == 2);
  CHECK(t.sums[1] == Approx(kPattern * 1e6));
  CHECK(InNamespace(t.pids[0]));
  std::vector<double> in(100000, kPattern), out(100000, 0.0);  // and 0.8 MB back
  long nulls = -1;
  REQUIRE(Ninf_call(d.Name("doubled").c_str(), 100000L, in.data(), out.data(), &nulls) == 0);
  for (double v : out) REQUIRE(v == 2 * kPattern);
  // A handle: its first call is redirected, the later ones go to rank 0 on
  // the same connection (over TLS: the same session).
  REQUIRE(grpc_initialize(nullptr) == GRPC_NO_ERROR);
  grpc_function_handle_t h;
  std::string host = "127.0.0.1:" + std::to_string(d.port());
  REQUIRE(grpc_function_handle_init(&h, host.data(), const_cast<char *>("team")) == GRPC_NO_ERROR);
  std::vector<double> z(50000, kPattern);
  for (int i = 0; i < 3; ++i) {
    Team v;
    REQUIRE(grpc_call(&h, 50000L, z.data(), &v.size, v.sums, v.pids) == GRPC_NO_ERROR);
    REQUIRE(v.sums[1] == Approx(kPattern * 50000));
    REQUIRE(v.pids[0] == t.pids[0]);
  }
  CHECK(grpc_function_handle_destruct(&h) == GRPC_NO_ERROR);
  CHECK(grpc_finalize() == GRPC_NO_ERROR);
  // Rank 0's launch token, from its environment.
  std::ifstream env("/proc/" + std::to_string(t.pids[0]) + "/environ", std::ios::binary);
  std::string token;
  for (std::string var; std::getline(env, var, '\0');)
    if (var.rfind("NINF_LAUNCH_TOKEN=", 0) == 0) token = var.substr(18);
  REQUIRE(token.size() == 32);
  std::ofstream(Env("NINF_TEST_WIRE_TOKEN")) << token;
}
