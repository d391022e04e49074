// Unit tests of the interrupt check (protocol/interrupt.h): WaitFd's slices
// keep the timeout's meaning, a check that says stop ends a wait, a signal
// ends no wait by itself, and an interrupted Channel resets its connection
// (what makes ninfd see the client gone at once).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <thread>

#include "protocol/frame.h"
#include "protocol/interrupt.h"
#include "protocol/wire.h"

using namespace ninf;

namespace {

using Clock = std::chrono::steady_clock;

std::atomic<int> g_asked{0};
std::atomic<bool> g_stop{false};

int CountingCheck() {
  ++g_asked;
  return g_stop.load() ? 1 : 0;
}

// Installs CountingCheck (or none) for one test case, and removes it after.
struct CheckScope {
  explicit CheckScope(InterruptCheck check) {
    g_asked = 0;
    g_stop = false;
    SetInterruptCheck(check);
  }
  ~CheckScope() { SetInterruptCheck(nullptr); }
};

struct Pair {
  int a = -1, b = -1;
  Pair() {
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    a = sv[0];
    b = sv[1];
  }
  ~Pair() {
    if (a >= 0) ::close(a);
    if (b >= 0) ::close(b);
  }
};

long MsSince(Clock::time_point t) {
  return static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count());
}

void NoOp(int) {}

}  // namespace

TEST_CASE("interrupt_without_check_a_wait_is_one_poll_and_a_signal_ends_nothing", "[interrupt]") {
  CheckScope scope(nullptr);
  Pair p;
  // A signal whose handler returns (no SA_RESTART: poll fails with EINTR)
  // in the middle of the wait: the wait goes on to its timeout.
  struct sigaction sa {};
  sa.sa_handler = NoOp;
  struct sigaction old {};
  REQUIRE(::sigaction(SIGUSR1, &sa, &old) == 0);
  const pthread_t self = ::pthread_self();
  std::thread poke([self] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ::pthread_kill(self, SIGUSR1);
  });
  int err = 0;
  const auto t0 = Clock::now();
  const WaitResult r = WaitFd(p.a, POLLIN, 300, &err);
  const long waited = MsSince(t0);
  poke.join();
  ::sigaction(SIGUSR1, &old, nullptr);
  CHECK(r == WaitResult::kTimeout);
  CHECK(waited >= 250);  // not ended by the signal at 50 ms
  CHECK(g_asked == 0);
}

TEST_CASE("interrupt_check_is_asked_between_slices_and_the_timeout_keeps_its_meaning",
          "[interrupt]") {
  CheckScope scope(CountingCheck);
  Pair p;
  int err = 0;
  const auto t0 = Clock::now();
  // 350 ms without progress: at least four slices of at most 100 ms, each
  // followed by a check that says go on; then the timeout, not sooner.
  CHECK(WaitFd(p.a, POLLIN, 350, &err) == WaitResult::kTimeout);
  CHECK(MsSince(t0) >= 340);
  CHECK(g_asked >= 3);
  // Progress is progress: a ready socket is ready while the check says go on.
  REQUIRE(::write(p.b, "x", 1) == 1);
  CHECK(WaitFd(p.a, POLLIN, 1000, &err) == WaitResult::kReady);
}

TEST_CASE("interrupt_check_that_says_stop_ends_a_wait_forever", "[interrupt]") {
  CheckScope scope(CountingCheck);
  Pair p;
  std::thread stopper([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    g_stop = true;
  });
  int err = 0;
  CHECK(WaitFd(p.a, POLLIN, -1, &err) == WaitResult::kInterrupted);
  stopper.join();
  CHECK(g_asked >= 1);
  CHECK(InterruptRequested());
  const Status st = InterruptedStatus();
  CHECK(st.code() == NINF_ERR_CANCELLED);
  CHECK(st.message().find("interrupted") != std::string::npos);
}

TEST_CASE("interrupt_of_a_channel_fails_its_read_and_resets_the_connection", "[interrupt]") {
  // Over TCP, where a reset is visible to the peer as ECONNRESET.
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener, 1) == 0);
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr *>(&addr), &len) == 0);
  int client = -1;
  REQUIRE(ConnectTcp("127.0.0.1", ntohs(addr.sin_port), 5000, &client).ok());
  const int server = ::accept(listener, nullptr, nullptr);
  REQUIRE(server >= 0);
  ::close(listener);

  CheckScope scope(CountingCheck);
  g_stop = true;
  {
    Channel ch(client, 60000);
    FrameHeader h;
    const Status st = ch.RecvHeader(1 << 20, &h);  // nothing comes: the wait is interrupted
    CHECK(st.code() == NINF_ERR_CANCELLED);
  }  // closed here
  // The peer (ninfd, in a call) learns it at once: a reset, not an end of
  // stream that could be a half-close.
  char byte;
  pollfd pf{server, POLLIN, 0};
  REQUIRE(::poll(&pf, 1, 5000) == 1);
  const ssize_t n = ::recv(server, &byte, 1, 0);
  const int e = errno;
  CHECK(n == -1);
  CHECK(e == ECONNRESET);
  ::close(server);
}
