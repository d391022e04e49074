#include "tests/server/stub_fixture.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "tests/server/test_client.h"

#ifndef STUB_SCALE_PATH
#define STUB_SCALE_PATH "stub_scale"
#endif

namespace ninf::test {

std::string StubScalePath() {
  const char *env = std::getenv("STUB_SCALE");
  return env && *env ? env : STUB_SCALE_PATH;
}

StubFixture::StubFixture(std::vector<std::string> args) {
  std::string cmd = StubScalePath() + " --interface > " + registry.Join("scale.interface");
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("failed: " + cmd);
  if (::symlink(StubScalePath().c_str(), registry.Join("scale").c_str()) != 0)
    throw std::runtime_error("cannot link " + registry.Join("scale"));
  args.insert(args.begin(), {"--registry", registry.path()});
  daemon = std::make_unique<Daemon>(args);
}

StubFixture::~StubFixture() {
  // The daemon must exit cleanly; ~Daemon would only stop it.
  if (daemon->Running()) CHECK(daemon->Stop() == 0);
}

std::string ScaleArgs(int64_t n, double factor, int64_t sleep_ms, const std::string &payload) {
  wire::Args args;
  args.add_scalars()->set_i(n);
  args.add_scalars()->set_d(factor);
  args.add_scalars()->set_i(sleep_ms);
  return FrameBytes(FRAME_ARGS, &args, payload);
}

void SendScale(Channel &ch, uint64_t call_id, int n, double factor, int64_t sleep_ms,
               bool persistent, uint32_t heartbeat_ms) {
  wire::CallRequest call;
  call.set_name("scale");
  call.set_call_id(call_id);
  call.set_persistent(persistent);
  call.set_heartbeat_ms(heartbeat_ms);
  WriteAll(ch.fd(),
           FrameBytes(FRAME_CALL, &call) + ScaleArgs(n, factor, sleep_ms, DoublePayload(n)));
}

std::vector<double> Doubles(const std::string &bytes) {
  std::vector<double> out(bytes.size() / sizeof(double));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(double));
  return out;
}

}  // namespace ninf::test
