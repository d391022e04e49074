#include "e2e_fixture.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "test_client.h"

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
