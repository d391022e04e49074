#include "protocol/interrupt.h"

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>

namespace ninf {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<InterruptCheck> g_check{nullptr};

// When this thread last asked the check while its socket stayed ready: a
// transfer that never has to sleep (a large array over a fast link) still
// asks about once a slice, and not once per wait, since a check may be
// costly (Python's takes the GIL).
thread_local Clock::time_point t_last_ready_check{};

// Milliseconds left until `deadline`, rounded up (a poll of 0 ms would
// spin through the last fraction), never negative.
int MsUntil(Clock::time_point deadline) {
  const auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
}

bool Asked() {
  const InterruptCheck check = g_check.load(std::memory_order_acquire);
  return check && check() != 0;
}

}  // namespace

void SetInterruptCheck(InterruptCheck check) { g_check.store(check, std::memory_order_release); }

bool InterruptRequested() { return Asked(); }

Status InterruptedStatus() {
  return Status(NINF_ERR_CANCELLED, "interrupted (the caller's interrupt check asked to stop)");
}

WaitResult WaitFd(int fd, short events, int timeout_ms, int *err) {
  pollfd p{fd, events, 0};
  if (!g_check.load(std::memory_order_acquire)) {
    // No check: one poll with the whole timeout, restarted after a signal.
    for (;;) {
      const int r = ::poll(&p, 1, timeout_ms < 0 ? -1 : timeout_ms);
      if (r > 0) return WaitResult::kReady;
      if (r == 0) return WaitResult::kTimeout;
      if (errno != EINTR) {
        *err = errno;
        return WaitResult::kError;
      }
    }
  }
  // Slices. The timeout is still "no progress for timeout_ms": the slices
  // count against one deadline, so the check changes when the wait is
  // asked about, never how long it lasts.
  const bool forever = timeout_ms < 0;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::milliseconds(forever ? 0 : timeout_ms);
  for (;;) {
    const int slice = forever ? kInterruptSliceMs : std::min(kInterruptSliceMs, MsUntil(deadline));
    const int r = ::poll(&p, 1, slice);
    if (r > 0) {
      const Clock::time_point now = Clock::now();
      if (now - t_last_ready_check < std::chrono::milliseconds(kInterruptSliceMs))
        return WaitResult::kReady;
      t_last_ready_check = now;
      return Asked() ? WaitResult::kInterrupted : WaitResult::kReady;
    }
    if (r < 0 && errno != EINTR) {
      *err = errno;
      return WaitResult::kError;
    }
    // A slice ran out, or a signal came (EINTR): its handler may be the
    // very reason to stop, so the check is asked at once.
    if (Asked()) return WaitResult::kInterrupted;
    if (!forever && Clock::now() >= deadline) return WaitResult::kTimeout;
  }
}

}  // namespace ninf
