// A real ninfd serving a registry of fake executables (fake_executable.cc),
// for the black-box call tests: the daemon is started with the registry and
// any extra arguments, and must exit 0 on SIGTERM at the end of the test.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "tests/server/daemon_fixture.h"
#include "tests/server/test_client.h"

namespace ninf::test {

struct FakeDaemon {
  TempDir registry;
  std::unique_ptr<Daemon> daemon;

  FakeDaemon(const std::vector<std::string> &functions, std::vector<std::string> args = {}) {
    MakeFakeRegistry(registry, functions);
    args.insert(args.begin(), {"--registry", registry.path()});
    daemon = std::make_unique<Daemon>(args);
  }
  ~FakeDaemon() {
    if (daemon->Running()) CHECK(daemon->Stop() == 0);
  }
};

// One call of a fake function on a fresh connection: `ms` of work on
// `payload`, whose echo lands in *result.
inline Status CallFake(const Daemon &d, const std::string &name, uint64_t call_id, int64_t ms,
                       const std::string &payload, std::string *result, bool persistent = false,
                       uint32_t heartbeat_ms = 0) {
  Channel ch(d.Connect(), 30000);
  SendCall(ch, name, call_id, ms, payload, persistent, heartbeat_ms);
  return RecvResult(ch, result);
}

}  // namespace ninf::test
