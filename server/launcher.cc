#include "launcher.h"

#include <algorithm>

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

int RanksOf(const std::string &function, const Settings &s, int cores) {
  if (auto it = s.function_limits.find(function); it != s.function_limits.end() && it->second.ranks)
    return static_cast<int>(it->second.ranks);
  if (s.mpi_ranks > 0) return static_cast<int>(s.mpi_ranks);
  return std::max(1, cores);
}

}  // namespace

Launch LaunchFor(const wire::FunctionInterface &iface, const Settings &s, int cores, bool root) {
  Launch launch;
  if (iface.backend().empty()) return launch;
  launch.ranks = RanksOf(iface.name(), s, cores);
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

int CoresHeld(const Launch &launch, int cores) {
  return launch.ranks > 0 ? std::min(launch.ranks, std::max(1, cores)) : 0;
}

Status CheckLaunches(const Settings &s, int cores) {
  if (s.mpi_oversubscribe) return Status::Ok();
  auto too_many = [&](const std::string &what, int64_t ranks) {
    return Status(NINF_ERR_INVALID_ARGUMENT,
                  what + " = " + std::to_string(ranks) + " is more than this machine's " +
                      std::to_string(cores) +
                      " cores: lower it, or set mpi_oversubscribe = true to run them anyway");
  };
  if (s.mpi_ranks > cores) return too_many("mpi_ranks", s.mpi_ranks);
  for (const auto &[name, limits] : s.function_limits)
    if (limits.ranks > cores) return too_many("limits." + name + ".ranks", limits.ranks);
  return Status::Ok();
}

}  // namespace ninf::server
