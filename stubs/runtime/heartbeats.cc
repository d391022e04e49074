#include "stubs/runtime/heartbeats.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <system_error>

#include "ninf.pb.h"
#include "protocol/control.h"

namespace ninf::stub {

using Clock = std::chrono::steady_clock;

Heartbeats::Heartbeats(int control_fd, std::function<void()> client_gone)
    : control_fd_(control_fd), client_gone_(std::move(client_gone)) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return;  // no heartbeats then; calls go on without them
  try {
    thread_ = std::thread([this] { Run(); });
  } catch (const std::system_error &) {
  }
}

Heartbeats::~Heartbeats() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    quit_ = true;
  }
  if (thread_.joinable()) {
    Wake();
    thread_.join();
  }
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void Heartbeats::Start(Channel &ch, uint32_t period_ms) {
  if (period_ms == 0 || !thread_.joinable()) return;
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    want_.ch = &ch;
    want_.period_ms = period_ms;
    ++want_.generation;
    want_.since = Clock::now();
    // Asleep for longer than this call's first beat may wait: wake it.
    wake = idle_timeout_ms_ < 0 || idle_timeout_ms_ > static_cast<int>(period_ms);
    idle_timeout_ms_ = static_cast<int>(period_ms);
  }
  if (wake) Wake();
}

void Heartbeats::Stop() {
  // Taken only between beats: once it is ours, the thread cannot start
  // another (it checks Current() under the same lock).
  std::lock_guard<std::mutex> lock(mu_);
  want_.ch = nullptr;
}

void Heartbeats::Wake() {
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void Heartbeats::Run() {
  for (;;) {
    Beating beating;
    int timeout_ms;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (quit_) return;
      beating = want_;
      timeout_ms = idle_timeout_ms_;
    }
    if (beating.ch != nullptr) {
      Beat(beating);
      continue;
    }
    pollfd wake{wake_fd_, POLLIN, 0};
    const int r = ::poll(&wake, 1, timeout_ms);
    if (r < 0 && errno != EINTR) return;
    uint64_t count;
    if (r > 0) (void)!::read(wake_fd_, &count, sizeof count);
  }
}

void Heartbeats::Beat(const Beating &beating) {
  const auto period = std::chrono::milliseconds(beating.period_ms);
  const wire::Heartbeat beat;
  Clock::time_point next = beating.since + period;
  const int control = control_fd_;
  for (;;) {
    pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {control, POLLIN, 0}};
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now());
    const int r = ::poll(fds, 2, static_cast<int>(std::max<int64_t>(0, wait.count())));
    if (r < 0 && errno != EINTR) return;
    if (r > 0 && (fds[0].revents & POLLIN)) {
      uint64_t count;
      (void)!::read(wake_fd_, &count, sizeof count);
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (!Current(beating)) return;
    bool due = Clock::now() >= next;
    int got = 1;
    if (r > 0 && (fds[1].revents & POLLIN)) {
      ControlMsg msg;
      got = RecvControl(control, &msg, nullptr);
      if (got == 1 && msg.kind == CTL_PROBE) due = true;
    }
    // A TCP channel (launch.h) ends with a readable EOF, not POLLHUP.
    if (got == 0 ||
        (r > 0 && !(fds[1].revents & POLLIN) && (fds[1].revents & (POLLHUP | POLLERR)))) {
      // ninfd closed the channel: it has killed this call's launcher (srun,
      // mpirun) or died itself. A direct child dies with ninfd anyway
      // (PR_SET_PDEATHSIG); a launched one, whose parent is the launcher or
      // slurmstepd, must end here, or its call would compute for nobody.
      std::fprintf(stderr, "ninf executable: ninfd closed the control channel mid-call; exiting\n");
      std::_Exit(1);
    }
    if (!due) continue;
    if (!beating.ch->SendFrame(FRAME_HEARTBEAT, &beat).ok()) {
      client_gone_();
      want_.ch = nullptr;  // nothing more to send to this client
      return;
    }
    next = Clock::now() + period;
  }
}

}  // namespace ninf::stub
