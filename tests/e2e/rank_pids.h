// The processes of an MPI job or a Slurm step as a test sees them from
// outside: the routine `hold` of tests/e2e/mpi/mpi.idl writes each rank's
// pid into DIR/rank-R.pid, and these read them back and watch them go; the
// routine `team` reports every rank's sum and pid.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

// Alive and not a zombie.
bool ProcessAlive(pid_t pid);

// True once none of `pids` is alive, within `timeout_ms`.
bool WaitProcessesGone(const std::vector<pid_t> &pids, int timeout_ms);

// A new empty folder for `tag`'s pid files (under the temporary folder).
std::string FreshPidDir(const std::string &tag);

// The pids of ranks 0..ranks-1 from DIR/rank-R.pid, once all are there;
// empty after `timeout_ms`.
std::vector<pid_t> RankPids(const std::string &dir, int ranks, int timeout_ms = 30000);

// A client that vanishes mid-call: a child process calls `function` (the
// name of a hold routine, "ninf://host:port/hold") with `dir` and 60 s,
// and is killed with SIGKILL, and reaped, once all `ranks` have written
// their pids. Returns those pids; empty if they never appeared (the child
// is killed all the same).
std::vector<pid_t> HoldThenVanish(const std::string &function, const std::string &dir, int ranks);

// What `team` (tests/e2e/mpi/mpi.idl) reports: the job's size, and each
// rank's sum of x and pid.
struct Team {
  long size = 0;
  double sums[16] = {};
  long pids[16] = {};
};

// Calls `function` ("ninf://host:port/team") on x; the call must succeed.
Team CallTeam(const std::string &function, std::vector<double> &x);

// 0, 1, ..., n-1.
std::vector<double> Ramp(long n);
