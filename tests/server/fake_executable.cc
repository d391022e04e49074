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
//   silent echo that never sends heartbeats (so any beat a client sees
//          came from ninfd)
// Every mode first sleeps for the milliseconds given by the second IN scalar,
// to make slow calls, sending heartbeats and answering probes meanwhile as
// the stub runtime does. ARGS: scalars {n, ms}, payload n doubles. A
// persistent hand-off serves ARGS frames until FRAME_END or the client
// closes, each later one after ninfd grants it a job slot. Admitted after
// arrival (kHandoffArgsFirst; a handle's later calls kHandoffLaterArgsFirst),
// a call asks for its slot once its arguments are in (a handle's later ones
// announced by CTL_ARRIVING), and its threads come with CTL_SLOT. A handle's first CALL_DONE offers
// ninfd a lease page (protocol/slot_lease.h) as the stub runtime's does, but this executable never
// begins a call on it: it asks for every slot, as one that raced ninfd's grant does, and ninfd
// takes the kept slot back.
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "ninf.pb.h"
#include "protocol/control.h"
#include "protocol/slot_lease.h"
#include "protocol/wire.h"

namespace {

using ninf::ControlMsg;
using Clock = std::chrono::steady_clock;

// From process start to the hand-off.
double waited_ms = 0;
bool g_silent = false;   // the "silent" mode
uint32_t g_threads = 0;  // the call's threads: CTL_HANDOFF's, or CTL_SLOT's

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

void Report(uint32_t kind, uint64_t call_id, int32_t error = 0, uint64_t in = 0, uint64_t out = 0,
            int pass_fd = -1) {
  ControlMsg m;
  m.kind = kind;
  m.call_id = call_id;
  m.error_code = error;
  m.bytes_in = in;
  m.bytes_out = out;
  m.recv_seconds = 0.001;
  m.compute_seconds = 0.002;
  m.send_seconds = 0.001;
  ninf::SendControl(ninf::kControlFd, m, pass_fd);
}

// The page offered with a handle's first CALL_DONE (-1 once offered).
int LeasePageToOffer(const ControlMsg &handoff) {
  static ninf::SlotLease lease;
  if (!(handoff.flags & ninf::kHandoffPersistent) || lease.valid()) return -1;
  return ninf::SlotLease::Create(&lease).ok() ? lease.fd() : -1;
}

// "Computes" for `ms` milliseconds the way the stub runtime does: a
// heartbeat every handoff.heartbeat_ms and one at once on CTL_PROBE; a beat
// that cannot be written is reported as CTL_CLIENT_GONE.
void Compute(ninf::Channel &ch, const ControlMsg &handoff, long ms) {
  const Clock::time_point end = Clock::now() + std::chrono::milliseconds(ms);
  const auto period = std::chrono::milliseconds(handoff.heartbeat_ms ? handoff.heartbeat_ms : ms);
  Clock::time_point next_beat = Clock::now() + period;
  bool gone = false;
  ninf::wire::Heartbeat beat;
  for (;;) {
    Clock::time_point now = Clock::now();
    if (now >= end) return;
    auto wake = std::min(end, next_beat);
    pollfd p{ninf::kControlFd, POLLIN, 0};
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(wake - now).count();
    int r = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, wait)));
    bool due = Clock::now() >= next_beat;
    if (r > 0 && (p.revents & POLLIN)) {
      ControlMsg m;
      if (ninf::RecvControl(ninf::kControlFd, &m, nullptr) == 1 && m.kind == ninf::CTL_PROBE)
        due = true;
    }
    if (!due) continue;
    next_beat = Clock::now() + period;
    if (gone || handoff.heartbeat_ms == 0 || g_silent) continue;
    if (!ch.SendFrame(ninf::FRAME_HEARTBEAT, &beat).ok()) {
      gone = true;
      Report(ninf::CTL_CLIENT_GONE, handoff.call_id);
    }
  }
}

// A persistent executable's later call (or, admitted after arrival, every
// call once its arguments are in) waits for a job slot, sending heartbeats
// meanwhile as the stub runtime does. 0, or the refusal's code.
int32_t WaitForSlot(ninf::Channel &ch, const ControlMsg &handoff) {
  Report(ninf::CTL_WANT_SLOT, handoff.call_id);
  ninf::wire::Heartbeat beat;
  const int period = handoff.heartbeat_ms ? static_cast<int>(handoff.heartbeat_ms) : -1;
  for (;;) {
    pollfd p{ninf::kControlFd, POLLIN, 0};
    const int r = ::poll(&p, 1, period);
    if (r == 0) {
      if (!g_silent) (void)ch.SendFrame(ninf::FRAME_HEARTBEAT, &beat);
      continue;
    }
    ControlMsg m;
    if (ninf::RecvControl(ninf::kControlFd, &m, nullptr) != 1) return NINF_ERR_SERVER;
    if (m.kind == ninf::CTL_PROBE && !g_silent) (void)ch.SendFrame(ninf::FRAME_HEARTBEAT, &beat);
    if (m.kind != ninf::CTL_SLOT) continue;
    if (m.threads > 0) g_threads = m.threads;
    return m.error_code;
  }
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
  if (handoff.flags & ninf::kHandoffArgsFirst) {
    if (const int32_t refused = WaitForSlot(ch, handoff); refused != 0) {
      (void)ch.SendError(ninf::Status(ninf::ErrorFromWire(refused), "no slot"));
      Report(ninf::CTL_CALL_DONE, handoff.call_id, refused, in, 0);
      return false;
    }
  }
  Report(ninf::CTL_ARGS_RECEIVED, handoff.call_id);

  long ms = args.scalars_size() > 1 ? args.scalars(1).i() : 0;
  if (ms > 0) Compute(ch, handoff, ms);
  if (mode == "crash") ::raise(SIGKILL);
  if (mode == "exit3") ::_exit(3);
  if (mode == "info")
    payload = "OPENBLAS_NUM_THREADS=" + Env("OPENBLAS_NUM_THREADS") +
              " OMP_NUM_THREADS=" + Env("OMP_NUM_THREADS") +
              " NINF_CALL_ID=" + Env("NINF_CALL_ID") + " NINF_OFFLOAD=" + Env("NINF_OFFLOAD") +
              " threads=" + std::to_string(g_threads) +
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
  Report(ninf::CTL_CALL_DONE, handoff.call_id, 0, in, ch.bytes_sent() - sent_before,
         LeasePageToOffer(handoff));
  return true;
}

}  // namespace

int main(int, char **argv) {
  const Clock::time_point started = Clock::now();
  std::string mode = Mode(argv[0]);
  if (mode == "diestart") return 4;
  g_silent = mode == "silent";
  ControlMsg handoff;
  int client = -1;
  if (ninf::RecvControl(ninf::kControlFd, &handoff, &client) != 1 ||
      handoff.kind != ninf::CTL_HANDOFF || client < 0)
    return 10;
  waited_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  ninf::Channel ch(client);
  bool persistent = handoff.flags & ninf::kHandoffPersistent;
  const bool later_args_first = handoff.flags & ninf::kHandoffLaterArgsFirst;
  g_threads = handoff.threads;
  for (int calls = 0; calls == 0 || persistent; ++calls) {
    ninf::FrameHeader h;
    if (!ch.RecvHeader(uint64_t{1} << 32, &h).ok() || h.type != ninf::FRAME_ARGS) break;
    // A handle's later calls follow their own order (ServeCall reads it).
    if (calls > 0)
      handoff.flags = later_args_first ? handoff.flags | ninf::kHandoffArgsFirst
                                       : handoff.flags & ~ninf::kHandoffArgsFirst;
    const bool args_first = handoff.flags & ninf::kHandoffArgsFirst;
    if (calls > 0 && args_first) Report(ninf::CTL_ARRIVING, handoff.call_id);
    if (calls > 0 && !args_first && WaitForSlot(ch, handoff) != 0) {
      (void)ch.SendError(ninf::Status(NINF_ERR_SERVER, "server busy"));
      return 12;
    }
    if (!ServeCall(ch, h, mode, handoff)) return 11;
  }
  return 0;
}
