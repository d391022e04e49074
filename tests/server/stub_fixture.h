// Helpers for the tests that run ninfd with stub_scale, an executable built
// on the real stub runtime:
//
//   scale(IN long n, IN double factor, IN long sleep_ms, INOUT double a[n])
//
// multiplies a by factor after sleeping sleep_ms.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "protocol/wire.h"
#include "tests/server/daemon_fixture.h"

namespace ninf::test {

// Path of stub_scale (STUB_SCALE env or the build-time default).
std::string StubScalePath();

// A registry holding `scale` (its interface written by the executable
// itself with --interface, as the runtime documents) and a daemon serving it
// with `args`. The destructor CHECKs that the daemon exits with status 0
// (Catch2 tests only).
struct StubFixture {
  TempDir registry;
  std::unique_ptr<Daemon> daemon;

  explicit StubFixture(std::vector<std::string> args = {});
  ~StubFixture();
};

// The bytes of FRAME_ARGS for scale, the payload being a's n doubles.
std::string ScaleArgs(int64_t n, double factor, int64_t sleep_ms, const std::string &payload);

// Sends FRAME_CALL and FRAME_ARGS for scale(n, factor, sleep_ms, 0..n-1) in
// one write.
void SendScale(Channel &ch, uint64_t call_id, int n, double factor, int64_t sleep_ms,
               bool persistent = false, uint32_t heartbeat_ms = 0);

std::vector<double> Doubles(const std::string &bytes);

}  // namespace ninf::test
