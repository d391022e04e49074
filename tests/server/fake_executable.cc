// A test executable that speaks ninfd's control channel (protocol/control.h)
// and the wire protocol directly, the way the stub runtime does, so that the
// daemon's spawn / hand-off / control / exit paths are tested on their own.
//
// Its behaviour comes from the name it is started under (the registry holds
// symlinks to it):
//   echo   returns the payload of each ARGS frame unchanged
//   info   returns, as the payload, text describing what it was given:
//          environment (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, NINF_CALL_ID)
//          the CTL_HANDOFF fields, its pid, how long it waited for the
//          hand-off after it started (a warm executable waits long), and its
//          open file descriptors
//   crash  kills itself with SIGKILL after CTL_ARGS_RECEIVED
//   exit3  exits with status 3 after CTL_ARGS_RECEIVED
//   fail   answers FRAME_ERROR (argument mismatch) and reports the error
//   diestart  exits with status 4 at once, before reading the hand-off (an
//          executable that cannot start)
// Every mode first sleeps for the milliseconds given by the second IN scalar,
// to make slow calls. ARGS: scalars {n, ms}, payload n doubles. A persistent
// hand-off serves ARGS frames until FRAME_END or the client closes.
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "control.h"
#include "ninf.pb.h"
#include "wire.h"

namespace {

using ninf::ControlMsg;
using Clock = std::chrono::steady_clock;

// From process start to the hand-off.
double waited_ms = 0;

std::string Mode(const char *argv0) {
  std::string s = argv0;
  std::size_t slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

std::string Env(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "(unset)";
}

// "0,1,2,3,4": the descriptors open in this process.
std::string OpenFds() {
  std::vector<int> fds;
  if (DIR *dir = ::opendir("/proc/self/fd")) {
    while (dirent *e = ::readdir(dir))
      if (e->d_name[0] != '.' && std::atoi(e->d_name) != ::dirfd(dir))
        fds.push_back(std::atoi(e->d_name));
    ::closedir(dir);
  }
  std::sort(fds.begin(), fds.end());
  std::string out;
  for (int fd : fds) out += (out.empty() ? "" : ",") + std::to_string(fd);
  return out;
}

void Report(uint32_t kind, uint64_t call_id, int32_t error = 0, uint64_t in = 0, uint64_t out = 0) {
  ControlMsg m;
  m.kind = kind;
  m.call_id = call_id;
  m.error_code = error;
  m.bytes_in = in;
  m.bytes_out = out;
  m.recv_seconds = 0.001;
  m.compute_seconds = 0.002;
  m.send_seconds = 0.001;
  ninf::SendControl(ninf::kControlFd, m);
}

// Serves one ARGS frame whose header `h` was just read. False to stop.
bool ServeCall(ninf::Channel &ch, const ninf::FrameHeader &h, const std::string &mode,
               const ControlMsg &handoff) {
  ninf::wire::Args args;
  if (!ch.RecvMessage(h, &args).ok()) return false;
  std::string payload(h.payload_length, '\0');
  iovec into{payload.data(), payload.size()};
  if (!ch.RecvPayload({&into, 1}).ok()) return false;
  uint64_t in = ninf::kFrameHeaderSize + h.header_length + h.payload_length;
  Report(ninf::CTL_ARGS_RECEIVED, handoff.call_id);

  long ms = args.scalars_size() > 1 ? args.scalars(1).i() : 0;
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  if (mode == "crash") ::raise(SIGKILL);
  if (mode == "exit3") ::_exit(3);
  if (mode == "info")
    payload = "OPENBLAS_NUM_THREADS=" + Env("OPENBLAS_NUM_THREADS") +
              " OMP_NUM_THREADS=" + Env("OMP_NUM_THREADS") +
              " NINF_CALL_ID=" + Env("NINF_CALL_ID") +
              " threads=" + std::to_string(handoff.threads) +
              " max_call_bytes=" + std::to_string(handoff.max_call_bytes) +
              " persistent=" + std::to_string(handoff.flags & ninf::kHandoffPersistent) +
              " call_id=" + std::to_string(handoff.call_id) +
              " heartbeat_ms=" + std::to_string(handoff.heartbeat_ms) +
              " pid=" + std::to_string(::getpid()) +
              " waited_ms=" + std::to_string(static_cast<long>(waited_ms)) + " fds=" + OpenFds();

  Report(ninf::CTL_REPLYING, handoff.call_id);
  uint64_t sent_before = ch.bytes_sent();
  if (mode == "fail") {
    ch.SendError(ninf::Status(NINF_ERR_ARGUMENT_MISMATCH, "fake failure"));
    Report(ninf::CTL_CALL_DONE, handoff.call_id, NINF_ERR_ARGUMENT_MISMATCH, in,
           ch.bytes_sent() - sent_before);
    return true;
  }
  ninf::wire::Result result;
  iovec out{payload.data(), payload.size()};
  if (!ch.SendFrame(ninf::FRAME_RESULT, &result, {&out, 1}).ok()) return false;
  Report(ninf::CTL_CALL_DONE, handoff.call_id, 0, in, ch.bytes_sent() - sent_before);
  return true;
}

}  // namespace

int main(int, char **argv) {
  const Clock::time_point started = Clock::now();
  std::string mode = Mode(argv[0]);
  if (mode == "diestart") return 4;
  ControlMsg handoff;
  int client = -1;
  if (ninf::RecvControl(ninf::kControlFd, &handoff, &client) != 1 ||
      handoff.kind != ninf::CTL_HANDOFF || client < 0)
    return 10;
  waited_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  ninf::Channel ch(client);
  bool persistent = handoff.flags & ninf::kHandoffPersistent;
  do {
    ninf::FrameHeader h;
    if (!ch.RecvHeader(uint64_t{1} << 32, &h).ok() || h.type != ninf::FRAME_ARGS) break;
    if (!ServeCall(ch, h, mode, handoff)) return 11;
  } while (persistent);
  return 0;
}
