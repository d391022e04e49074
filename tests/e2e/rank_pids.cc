#include "tests/e2e/rank_pids.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <fstream>

#include "client/ninf.h"

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

std::vector<pid_t> HoldThenVanish(const std::string &function, const std::string &dir, int ranks) {
  const pid_t client = ::fork();
  if (client < 0) return {};
  if (client == 0) {
    long done = 0;
    (void)Ninf_call(function.c_str(), dir.c_str(), 60L, &done);
    ::_exit(0);
  }
  std::vector<pid_t> pids = RankPids(dir, ranks);
  ::kill(client, SIGKILL);
  int status = 0;
  while (::waitpid(client, &status, 0) < 0 && errno == EINTR) {
  }
  return pids;
}

Team CallTeam(const std::string &function, std::vector<double> &x) {
  Team t;
  const int rc =
      Ninf_call(function.c_str(), static_cast<long>(x.size()), x.data(), &t.size, t.sums, t.pids);
  INFO((rc == 0 ? std::string() : Ninf_get_error_detail()));
  REQUIRE(rc == 0);
  return t;
}

std::vector<double> Ramp(long n) {
  std::vector<double> x(static_cast<std::size_t>(n));
  for (long i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = static_cast<double>(i);
  return x;
}
