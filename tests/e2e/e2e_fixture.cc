#include "tests/e2e/e2e_fixture.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/server/test_client.h"

E2EDaemon::~E2EDaemon() {
  if (!daemon_.external()) CHECK(daemon_.Stop() == 0);
}

long E2EDaemon::Stat(const std::string &name) const {
  auto stats = ninf::test::GetStats(daemon_);
  auto it = stats.find(name);
  return it == stats.end() ? -1 : std::atol(it->second.c_str());
}

long E2EDaemon::WaitForStat(const std::string &name, long at_least) const {
  long v = Stat(name);
  for (int i = 0; i < 100 && v < at_least; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    v = Stat(name);
  }
  return v;
}

int E2EDaemon::ZombieChildren() const {
  std::size_t zombies = daemon_.ZombieChildren().size();
  for (int i = 0; i < 20 && zombies > 0; ++i) {  // reaping is asynchronous
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    zombies = daemon_.ZombieChildren().size();
  }
  return static_cast<int>(zombies);
}

int E2EDaemon::OpenFds() const {
  int n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(
           "/proc/" + std::to_string(daemon_.pid()) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++n;
  return n;
}

std::vector<std::string> UsersConfig(const ninf::test::TempDir &dir,
                                     const std::vector<TestUser> &users, const std::string &tail,
                                     const std::string &top) {
  std::string toml = top + "\n";
  for (const TestUser &u : users) {
    toml += "[users." + u.name + "]\n";
    if (!u.keys.empty()) {
      const std::string path = dir.Join(u.name + ".key");
      std::ofstream(path, std::ios::trunc) << u.keys << "\n";
      REQUIRE(::chmod(path.c_str(), 0600) == 0);
      toml += "key_file = \"" + path + "\"\n";
    }
    toml += u.table_extra + "\n";
  }
  toml += tail + "\n";
  const std::string config = dir.Join("ninfd.toml");
  std::ofstream(config, std::ios::trunc) << toml;
  return {"--config", config};
}

std::string RunInChild(const std::string &key_file, const std::function<std::string()> &body) {
  int pipefd[2];
  REQUIRE(::pipe(pipefd) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(pipefd[0]);
    if (key_file.empty())
      ::unsetenv("NINF_KEY_FILE");
    else
      ::setenv("NINF_KEY_FILE", key_file.c_str(), 1);
    const std::string out = body();
    (void)!::write(pipefd[1], out.data(), out.size());
    ::_exit(0);
  }
  ::close(pipefd[1]);
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(pipefd[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(pipefd[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return text;
}
