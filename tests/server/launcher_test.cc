// Unit tests of how ninfd starts executables (server/launcher.h): pure
// functions of the settings.
#include "server/launcher.h"

#include <catch2/catch.hpp>

using ninf::Status;
using ninf::server::CheckLaunches;
using ninf::server::CommandWords;
using ninf::server::CoresHeld;
using ninf::server::Launch;
using ninf::server::LaunchFor;
using ninf::server::ParseLaunchAddress;
using ninf::server::Settings;

namespace {

ninf::wire::FunctionInterface Iface(const std::string &name, bool mpi) {
  ninf::wire::FunctionInterface iface;
  iface.set_name(name);
  if (mpi) iface.set_backend("MPI");
  return iface;
}

}  // namespace

TEST_CASE("launcher_ordinary_executables_start_directly", "[launcher]") {
  Settings s;
  Launch l = LaunchFor(Iface("dgesv", false), s, 4, true);
  CHECK(l.direct());
  CHECK(l.ranks == 0);
  CHECK(l.env.empty());
  CHECK(CoresHeld(l, 4) == 0);
}

TEST_CASE("launcher_mpi_functions_run_one_rank_per_core_by_default", "[launcher]") {
  Settings s;
  Launch l = LaunchFor(Iface("ep_mpi", true), s, 4, false);
  CHECK(l.ranks == 4);
  CHECK(l.command == std::vector<std::string>{"mpirun", "-np", "4", "--bind-to", "none"});
  CHECK(l.env.empty());  // not root: nothing to allow
  CHECK(CoresHeld(l, 4) == 4);
}

TEST_CASE("launcher_ranks_come_from_the_function_then_the_server", "[launcher]") {
  Settings s;
  s.mpi_ranks = 3;
  s.function_limits["pdgesv"] = {{"ranks", int64_t{2}}};
  CHECK(LaunchFor(Iface("pdgesv", true), s, 8, false).ranks == 2);
  CHECK(LaunchFor(Iface("ep_mpi", true), s, 8, false).ranks == 3);
  // A limits table without ranks leaves the server's.
  s.function_limits["ep_mpi"] = {{"wall_seconds", int64_t{10}}};
  CHECK(LaunchFor(Iface("ep_mpi", true), s, 8, false).ranks == 3);
}

TEST_CASE("launcher_root_oversubscribe_and_extra_words", "[launcher]") {
  Settings s;
  s.mpirun = "/opt/ompi/bin/mpirun  --tag-output";
  s.mpirun_args = "--mca btl self,vader";
  s.mpi_oversubscribe = true;
  s.mpi_ranks = 6;
  Launch l = LaunchFor(Iface("f", true), s, 2, true);
  CHECK(l.command == std::vector<std::string>{"/opt/ompi/bin/mpirun", "--tag-output", "-np", "6",
                                              "--bind-to", "none", "--oversubscribe", "--mca",
                                              "btl", "self,vader"});
  CHECK(l.env == std::vector<std::pair<std::string, std::string>>{
                     {"OMPI_ALLOW_RUN_AS_ROOT", "1"}, {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}});
  CHECK(CoresHeld(l, 2) == 2);  // more ranks than cores hold every core, no more
}

TEST_CASE("launcher_more_ranks_than_cores_needs_oversubscribe", "[launcher]") {
  Settings s;
  CHECK(CheckLaunches(s, 2).ok());
  s.mpi_ranks = 3;
  ninf::Status st = CheckLaunches(s, 2);
  CHECK(st.code() == NINF_ERR_INVALID_ARGUMENT);
  CHECK_THAT(st.message(), Catch::Contains("mpi_ranks = 3") && Catch::Contains("2 cores") &&
                               Catch::Contains("mpi_oversubscribe"));
  s.mpi_ranks = 0;
  s.function_limits["big"] = {{"ranks", int64_t{16}}};
  CHECK_THAT(CheckLaunches(s, 2).message(), Catch::Contains("limits.big.ranks = 16"));
  s.mpi_oversubscribe = true;
  CHECK(CheckLaunches(s, 2).ok());
}

TEST_CASE("launcher_command_words_split_at_blanks", "[launcher]") {
  CHECK(CommandWords("").empty());
  CHECK(CommandWords("  a\tb  c\n") == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("launcher_slurm_starts_steps_with_srun", "[launcher]") {
  Settings s;
  s.launcher = "slurm";
  s.srun_args = "--partition debug";
  s.mpi_ranks = 3;
  Launch mpi = LaunchFor(Iface("ep_mpi", true), s, 2, true);
  CHECK(mpi.slurm);
  CHECK(mpi.ranks == 3);
  CHECK(mpi.command == std::vector<std::string>{"srun", "--ntasks", "3", "--overlap",
                                                "--oversubscribe", "--kill-on-bad-exit=1",
                                                "--quiet", "--mpi=pmix", "--partition", "debug"});
  Launch one = LaunchFor(Iface("dgesv", false), s, 2, true);
  CHECK(one.slurm);
  CHECK(one.ranks == 0);
  CHECK(one.command == std::vector<std::string>{"srun", "--ntasks", "1", "--overlap",
                                                "--oversubscribe", "--kill-on-bad-exit=1",
                                                "--quiet", "--mpi=none", "--partition", "debug"});
  // Slurm's cores are the allocation's: no oversubscription check here.
  CHECK(CheckLaunches(s, 2).ok());
  // One function back on the local launcher, or one sent to Slurm alone.
  s.function_limits["dgesv"] = {{"launcher", std::string("local")}};
  CHECK(LaunchFor(Iface("dgesv", false), s, 2, true).direct());
  Settings t;
  t.function_limits["ep_mpi"] = {{"launcher", std::string("slurm")}};
  CHECK(LaunchFor(Iface("ep_mpi", true), t, 2, false).slurm);
  CHECK_FALSE(LaunchFor(Iface("ep", false), t, 2, false).slurm);
}

TEST_CASE("launcher_launch_address_sends_launched_executables_over_tcp", "[launcher]") {
  Settings s;
  CHECK_FALSE(LaunchFor(Iface("ep_mpi", true), s, 2, false).over_tcp);
  s.launch_address = "10.0.0.1";
  CHECK(LaunchFor(Iface("ep_mpi", true), s, 2, false).over_tcp);
  // ninfd's own children keep fd 3 and the hand-off of the client's socket.
  CHECK_FALSE(LaunchFor(Iface("dgesv", false), s, 2, false).over_tcp);
  s.launcher = "slurm";
  CHECK(LaunchFor(Iface("dgesv", false), s, 2, false).over_tcp);
  CHECK(CheckLaunches(s, 2).ok());
}

TEST_CASE("launcher_launch_address_parses_host_or_host_port", "[launcher]") {
  ninf::HostPort hp;
  REQUIRE(ParseLaunchAddress("10.1.2.3", &hp).ok());
  CHECK(hp.host == "10.1.2.3");
  CHECK(hp.port == 0);  // any free port
  REQUIRE(ParseLaunchAddress("login1:7000", &hp).ok());
  CHECK(hp.host == "login1");
  CHECK(hp.port == 7000);
  REQUIRE(ParseLaunchAddress("[fd00::1]:7000", &hp).ok());
  CHECK(hp.host == "fd00::1");
  for (const char *bad :
       {"", "host:", "host:99999", "unix:/tmp/x", "0.0.0.0", "0.0.0.0:7000", "[::]:7000"}) {
    INFO(bad);
    Status st = ParseLaunchAddress(bad, &hp);
    CHECK(st.code() == NINF_ERR_INVALID_ARGUMENT);
    CHECK_THAT(st.message(), Catch::Contains("launch_address"));
  }
  Settings s;
  s.launch_address = "0.0.0.0";
  CHECK(CheckLaunches(s, 2).code() == NINF_ERR_INVALID_ARGUMENT);
}
