// What the metaserver's black-box tests (meta_e2e_test.cc,
// meta_hostile_test.cc) ask a running ninf-meta: one counter of its stats
// reply, and a wait until it counts a number of registered servers.
#pragma once

#include <chrono>
#include <string>
#include <thread>

#include "tests/server/daemon_fixture.h"
#include "tests/server/test_client.h"

namespace ninf::test {

inline long MetaStat(const Daemon &meta, const std::string &name) {
  return Stat(GetStats(meta), name);
}

// Waits up to `seconds` until the metaserver counts `servers` servers.
inline bool WaitForServers(const Daemon &meta, long servers, double seconds = 10) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (MetaStat(meta, "servers") == servers) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace ninf::test
