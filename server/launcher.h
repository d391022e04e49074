// How ninfd starts a function's executable: itself (posix_spawn, the
// control channel as fd 3), or through a launcher that starts it as an MPI
// job (mpirun). A launched executable is not ninfd's child and claims its
// control channel by connecting back (protocol/launch.h, LaunchBroker).
//
// The launcher of a function: [limits.NAME] launcher, else the `launcher`
// setting. "local": ninfd starts ordinary executables itself and MPI ones
// with mpirun. "slurm": every executable starts as a Slurm step (docs/cluster.md):
//   `srun` --ntasks N --overlap --oversubscribe --kill-on-bad-exit=1 --quiet
//          --mpi=pmix|none `srun_args` EXECUTABLE
// with N the ranks of an MPI function, else 1. Inside an allocation (ninfd
// started by salloc or sbatch, SLURM_JOB_ID set) the steps share it; outside
// one, each step is a job of its own. Either way ninfd's admission, not
// Slurm's, shares the cores: a warm step waiting for its call holds none
// (--overlap for steps, --oversubscribe for jobs, where the partition
// allows it).
//
// Rules for Backend "MPI" functions (docs/mpi.md):
//   ranks   [limits.NAME] ranks, else the `mpi_ranks` setting, else one per
//           core. More ranks than cores only with mpi_oversubscribe (the
//           check at start-up, CheckLaunches); admission holds
//           min(ranks, cores) cores for each call, so ranks never
//           outnumber the cores under any budget.
//   command `mpirun` -np RANKS --bind-to none [--oversubscribe] `mpirun_args`
//           EXECUTABLE; as root with OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM)=1,
//           which Open MPI otherwise refuses.
// With `launch_address` set, every launched executable (not the ones ninfd
// starts itself) connects back over TCP to that address instead of a Unix
// socket, so that its rank 0 may run on another host: the login-node setup
// of docs/cluster.md. Clients of such functions are redirected to rank 0
// (FRAME_REDIRECT) instead of having their socket passed to it.
// Pure functions of the settings: unit-tested in tests/server/launcher_test.cc.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ninf.pb.h"
#include "protocol/address.h"
#include "protocol/status.h"
#include "server/settings.h"

namespace ninf::server {

struct Launch {
  // The launcher's words before the executable's path; empty: ninfd starts
  // the executable itself.
  std::vector<std::string> command;
  // Variables the launcher needs on top of the executable's environment.
  std::vector<std::pair<std::string, std::string>> env;
  int ranks = 0;       // an MPI job's processes; 0: not an MPI job
  bool slurm = false;  // started as a Slurm step
  // Rank 0 may run on another host (`launch_address` set): it claims its
  // control channel over TCP, and clients are redirected to it.
  bool over_tcp = false;
  // The account the process runs as (unset: ninfd's own): started by fork,
  // the account's groups and ids set, then exec (posix_spawn cannot).
  RunAs run_as{};

  bool direct() const { return command.empty(); }
  bool operator==(const Launch &) const = default;
};

// The launch of `iface`'s executable with these settings on `cores` cores;
// `root`: ninfd runs as root.
Launch LaunchFor(const wire::FunctionInterface &iface, const Settings &settings, int cores,
                 bool root);

// Parses the `launch_address` setting: "HOST" (any free port) or
// "HOST:PORT". Errors: NINF_ERR_INVALID_ARGUMENT naming the setting.
Status ParseLaunchAddress(const std::string &text, HostPort *out);

// The ranks a call of an MPI function holds cores for: min(ranks, cores).
int CoresHeld(const Launch &launch, int cores);

// Settings that cannot work on this machine: an MPI function started by
// mpirun configured with more ranks than `cores` without mpi_oversubscribe,
// a launch_address that is no address.
// Errors:
// NINF_ERR_INVALID_ARGUMENT naming the function and what to change.
Status CheckLaunches(const Settings &settings, int cores);

// Splits a command line at blanks (no quoting: settings hold plain words).
std::vector<std::string> CommandWords(const std::string &text);

}  // namespace ninf::server
