#include "rank_pids.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

bool ProcessAlive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  // The state follows the command name, which may hold spaces and ')'.
  const std::size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

bool WaitProcessesGone(const std::vector<pid_t> &pids, int timeout_ms) {
  for (int waited = 0;; waited += 20) {
    bool any = false;
    for (pid_t p : pids) any = any || ProcessAlive(p);
    if (!any) return true;
    if (waited >= timeout_ms) return false;
    usleep(20000);
  }
}

std::string FreshPidDir(const std::string &tag) {
  namespace fs = std::filesystem;
  std::string dir =
      (fs::temp_directory_path() / ("ninf-ranks-" + tag + "-" + std::to_string(::getpid())))
          .string();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<pid_t> RankPids(const std::string &dir, int ranks, int timeout_ms) {
  for (int waited = 0; waited <= timeout_ms; waited += 20) {
    std::vector<pid_t> pids;
    for (int r = 0; r < ranks; ++r) {
      std::ifstream f(dir + "/rank-" + std::to_string(r) + ".pid");
      long pid = 0;
      if (f >> pid && pid > 0) pids.push_back(static_cast<pid_t>(pid));
    }
    if (static_cast<int>(pids.size()) == ranks) return pids;
    usleep(20000);
  }
  return {};
}
