#include "server/launcher.h"

#include <algorithm>

#include "protocol/launch.h"

namespace ninf::server {

std::vector<std::string> CommandWords(const std::string &text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

namespace {

std::string LauncherOf(const std::string &function, const Settings &s) {
  return s.LimitsOf(function).launcher;  // the server's launcher unless its table sets one
}

// srun ... for `tasks` tasks, MPI ones through PMIx (the only MPI plugin
// Debian's Open MPI and Slurm share: pmi2 fails).
std::vector<std::string> SrunCommand(const Settings &s, int tasks, bool mpi) {
  std::vector<std::string> words = CommandWords(s.srun);
  if (words.empty()) words.push_back("srun");
  words.insert(words.end(), {"--ntasks", std::to_string(tasks), "--overlap", "--oversubscribe",
                             "--kill-on-bad-exit=1", "--quiet", mpi ? "--mpi=pmix" : "--mpi=none"});
  for (std::string &w : CommandWords(s.srun_args)) words.push_back(std::move(w));
  return words;
}

int RanksOf(const std::string &function, const Settings &s, int cores) {
  // A table's ranks, else the server's mpi_ranks, else (0) one per core.
  if (const int64_t ranks = s.LimitsOf(function).ranks; ranks > 0) return static_cast<int>(ranks);
  return std::max(1, cores);
}

Launch LaunchCommand(const wire::FunctionInterface &iface, const Settings &s, int cores,
                     bool root) {
  Launch launch;
  const bool mpi = !iface.backend().empty();
  if (mpi) launch.ranks = RanksOf(iface.name(), s, cores);
  if (LauncherOf(iface.name(), s) == "slurm") {
    launch.slurm = true;
    launch.command = SrunCommand(s, mpi ? launch.ranks : 1, mpi);
    return launch;
  }
  if (!mpi) return launch;
  launch.command = CommandWords(s.mpirun);
  if (launch.command.empty()) launch.command.push_back("mpirun");
  // --bind-to none: ninfd's admission, not Open MPI's binding, shares the
  // cores (by default Open MPI pins every job's rank 0 to core 0).
  launch.command.insert(launch.command.end(),
                        {"-np", std::to_string(launch.ranks), "--bind-to", "none"});
  if (s.mpi_oversubscribe) launch.command.push_back("--oversubscribe");
  for (std::string &w : CommandWords(s.mpirun_args)) launch.command.push_back(std::move(w));
  if (root) {
    launch.env.emplace_back("OMPI_ALLOW_RUN_AS_ROOT", "1");
    launch.env.emplace_back("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  }
  return launch;
}

}  // namespace

Launch LaunchFor(const wire::FunctionInterface &iface, const Settings &s, int cores, bool root) {
  Launch launch = LaunchCommand(iface, s, cores, root);
  launch.over_tcp = !launch.direct() && !s.launch_address.empty();
  if (!s.tls_cert.empty()) launch.env.emplace_back(kExecutableTlsEnv, "1");
  // Kept data fetched from another ninfd (stubs/runtime/kept_data.cc) goes
  // over TLS with this daemon's trust anchors and, for a server that asks
  // for one, its certificate.
  if (!s.tls_ca.empty()) {
    launch.env.emplace_back("NINF_TLS_CA", s.tls_ca);
    if (!s.tls_cert.empty()) {
      launch.env.emplace_back("NINF_TLS_CERT", s.tls_cert);
      launch.env.emplace_back("NINF_TLS_KEY", s.tls_key);
    }
  }
  return launch;
}

Status ParseLaunchAddress(const std::string &text, HostPort *out) {
  const Status bad(NINF_ERR_INVALID_ARGUMENT,
                   "launch_address = \"" + text +
                       "\": expected HOST or HOST:PORT, an address of this host that the launched "
                       "executables can reach");
  bool parsed = ParseHostPort(text, HostPort{"", 0}, out).ok() && out->unix_path.empty();
  if (!parsed && text.find(':') == std::string::npos && !text.empty() &&
      ParseHostPort(text + ":1", HostPort{"", 0}, out).ok()) {
    out->port = 0;  // "HOST" alone: any free port
    parsed = true;
  }
  if (!parsed) return bad;
  // The executables are told this address: "anywhere" tells them nothing.
  if (out->host == "0.0.0.0" || out->host == "::" || out->host == "[::]")
    return Status(NINF_ERR_INVALID_ARGUMENT,
                  bad.message() + " (not a wildcard: the executables connect to it)");
  return Status::Ok();
}

int CoresHeld(const Launch &launch, int cores) {
  return launch.ranks > 0 ? std::min(launch.ranks, std::max(1, cores)) : 0;
}

Status CheckLaunches(const Settings &s, int cores) {
  HostPort ignored;
  if (!s.launch_address.empty())
    NINF_RETURN_IF_ERROR(ParseLaunchAddress(s.launch_address, &ignored));
  if (s.mpi_oversubscribe) return Status::Ok();
  auto too_many = [&](const std::string &what, int64_t ranks) {
    return Status(NINF_ERR_INVALID_ARGUMENT,
                  what + " = " + std::to_string(ranks) + " is more than this machine's " +
                      std::to_string(cores) +
                      " cores: lower it, or set mpi_oversubscribe = true to run them anyway");
  };
  // Slurm steps run on the allocation's cores, which ninfd cannot count.
  if (s.mpi_ranks > cores && s.launcher != "slurm") return too_many("mpi_ranks", s.mpi_ranks);
  // Only the tables that set ranks: the others' is mpi_ranks, checked above.
  for (const auto &[name, keys] : s.function_limits)
    if (const int64_t ranks = s.LimitsOf(name).ranks;
        keys.count("ranks") && ranks > cores && LauncherOf(name, s) != "slurm")
      return too_many("limits." + name + ".ranks", ranks);
  return Status::Ok();
}

}  // namespace ninf::server
