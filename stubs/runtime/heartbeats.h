// While the routine runs, proves to the client that the executable is alive
// and computing: an empty FRAME_HEARTBEAT every period, and one at once when
// ninfd asks (CTL_PROBE: the client shut its write side, and only a write
// tells a half-close from a closed client, which answers with a reset). The
// client's session timeout can then tell a long computation from a dead
// server. A beat that cannot be written means the client is gone: the
// `client_gone` callback tells ninfd (CTL_CLIENT_GONE), which kills this
// process rather than let the routine finish for nobody.
//
// One helper thread per process, started with it (a warm process has it
// ready before its call) and kept for every call: starting and joining a
// thread per call cost ~45 us of a ~110 us handle `null` on the 2-vCPU VM of
// bench/results, and waking it at each Start() and Stop() another ~30 us.
// So Start() and Stop() only change what the thread is asked for, under a
// lock; the thread looks at it when it wakes, which it does at the latest
// one period after Start() (its idle sleep lasts a period), so the first
// beat still comes one period after Start(). A probe that arrives before
// the thread has noticed the call is answered when it does, within a
// period. Between Stop() and the next Start() the thread neither writes to
// any channel nor reads the control socket (the main thread reads
// CTL_HANDOFF there): both happen only under the lock, for the call it was
// asked for, so the RESULT that follows Stop() never interleaves with a beat.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "protocol/wire.h"

namespace ninf::stub {

class Heartbeats {
 public:
  Heartbeats(int control_fd, std::function<void()> client_gone);
  ~Heartbeats();  // ends and joins the thread
  Heartbeats(const Heartbeats &) = delete;
  Heartbeats &operator=(const Heartbeats &) = delete;

  // Beats on `ch` every `period_ms` (> 0) from now until Stop(). Without a
  // thread (none could be made at start) the call goes on without beats.
  void Start(Channel &ch, uint32_t period_ms);
  // When it returns, no beat is being written and none will be.
  void Stop();

 private:
  // What Start() asks for; `generation` tells one call's beating from the
  // next one's.
  struct Beating {
    Channel *ch = nullptr;  // null: stopped
    uint32_t period_ms = 0;
    uint64_t generation = 0;
    std::chrono::steady_clock::time_point since;  // Start()
  };

  void Run();
  // Beats for one Start() until it is stopped or superseded.
  void Beat(const Beating &beating);
  // Wakes the thread from its poll (only when it would sleep too long).
  void Wake();
  // True while `beating` is still what was asked for (mu_ held).
  bool Current(const Beating &beating) const {
    return !quit_ && want_.ch == beating.ch && want_.generation == beating.generation;
  }

  const int control_fd_;
  const std::function<void()> client_gone_;
  int wake_fd_ = -1;  // eventfd
  std::mutex mu_;     // held while a beat is written or a probe read
  Beating want_;
  bool quit_ = false;
  // How long the idle thread sleeps: the last period asked for, or forever
  // before the first call (then Start() wakes it).
  int idle_timeout_ms_ = -1;
  std::thread thread_;  // last: the thread starts once the rest is set
};

}  // namespace ninf::stub
