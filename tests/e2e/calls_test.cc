// End-to-end calls through the real ninfd and the real standard-library
// executables: every standard function against a local computation.
#include <cblas.h>
#include <lapacke.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "client/ninf.h"
#include "tests/e2e/e2e_fixture.h"

namespace {

std::vector<double> RandomMatrix(int n, int m, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> a(static_cast<std::size_t>(n) * m);
  for (double &x : a) x = u(rng);
  return a;
}

// ||A x - b||_inf / (||A||_inf ||x||_inf n eps), column-major A (lda = n).
double ScaledResidual(int n, const std::vector<double> &a, const std::vector<double> &x,
                      const std::vector<double> &b) {
  double r = 0, anorm = 0, xnorm = 0;
  for (int i = 0; i < n; ++i) {
    double s = 0, row = 0;
    for (int j = 0; j < n; ++j) {
      s += a[static_cast<std::size_t>(j) * n + i] * x[j];
      row += std::fabs(a[static_cast<std::size_t>(j) * n + i]);
    }
    r = std::max(r, std::fabs(s - b[i]));
    anorm = std::max(anorm, row);
    xnorm = std::max(xnorm, std::fabs(x[i]));
  }
  return r / (anorm * xnorm * n * 2.220446049250313e-16);
}

}  // namespace

namespace {

// TIME_WAIT sockets (state 06 of /proc/net/tcp) whose far end is 127.0.0.1
// port `port`: a client's closed connections to a server there.
int TimeWaitTo(int port) {
  std::ifstream tcp("/proc/net/tcp");
  std::string line;
  std::getline(tcp, line);  // the header
  char remote[16];
  std::snprintf(remote, sizeof remote, "0100007F:%04X", port);
  int n = 0;
  while (std::getline(tcp, line)) {
    std::istringstream fields(line);
    std::string slot, local, far, state;
    if ((fields >> slot >> local >> far >> state) && far == remote && state == "06") ++n;
  }
  return n;
}

}  // namespace

// A client that makes one-shot calls over TCP (to another host, or here
// without the Unix-domain socket) leaves no TIME_WAIT socket per call: it
// would run out of ephemeral ports at a few hundred calls/s sustained
// (client/connect.h CloseWithoutTimeWait).
TEST_CASE("calls_one_shot_calls_over_tcp_leave_no_time_wait_behind", "[e2e]") {
  E2EDaemon d({"--unix-socket", ""});
  const int before = TimeWaitTo(d.port());
  constexpr int kCalls = 60;
  for (int i = 0; i < kCalls; ++i) REQUIRE(Ninf_call(d.Name("null").c_str()) == 0);
  REQUIRE(d.WaitForStat("completed", kCalls) >= kCalls);
  // The first call's interface query has a connection of its own.
  CHECK(TimeWaitTo(d.port()) - before <= 2);
}

TEST_CASE("calls_dgesv_matches_lapack", "[e2e]") {
  E2EDaemon d;
  const int n = 300, nrhs = 2, lda = n, ldb = n;
  std::vector<double> a0 = RandomMatrix(n, n, 1), b0 = RandomMatrix(n, nrhs, 2);
  std::vector<double> a = a0, b = b0;
  std::vector<int> ipiv(n, -1);
  int info = -1;
  REQUIRE(Ninf_call(d.Name("dgesv").c_str(), n, nrhs, a.data(), lda, ipiv.data(), b.data(), ldb,
                    &info) == 0);
  CHECK(info == 0);
  for (int k = 0; k < nrhs; ++k) {
    std::vector<double> x(b.begin() + k * n, b.begin() + (k + 1) * n);
    std::vector<double> rhs(b0.begin() + k * n, b0.begin() + (k + 1) * n);
    CHECK(ScaledResidual(n, a0, x, rhs) < 16.0);
  }
  // The same solve locally gives the same factors and pivots.
  std::vector<double> la = a0, lb = b0;
  std::vector<lapack_int> lpiv(n);
  REQUIRE(LAPACKE_dgesv(LAPACK_COL_MAJOR, n, nrhs, la.data(), lda, lpiv.data(), lb.data(), ldb) ==
          0);
  for (int i = 0; i < n; ++i) CHECK(ipiv[i] == lpiv[i]);
  double maxdiff = 0;
  for (std::size_t i = 0; i < lb.size(); ++i) maxdiff = std::max(maxdiff, std::fabs(lb[i] - b[i]));
  CHECK(maxdiff < 1e-9);
}

// Ninf_get_call_info: where the time of the thread's last call went, the
// server's part carried in the RESULT frame.
TEST_CASE("calls_call_info_reports_server_times", "[e2e]") {
  std::thread([] {  // a thread that has made no call yet
    Ninf_call_info none;
    CHECK(Ninf_get_call_info(&none) == -1);
    CHECK(Ninf_get_error() == NINF_ERR_INVALID_ID);
  })
      .join();
  CHECK(Ninf_get_call_info(nullptr) == -1);
  CHECK(Ninf_get_error() == NINF_ERR_INVALID_ARGUMENT);

  E2EDaemon d;
  const int n = 400, nrhs = 1;
  std::vector<double> a = RandomMatrix(n, n, 3), b = RandomMatrix(n, nrhs, 4);
  std::vector<int> ipiv(n);
  int info = -1;
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(Ninf_call(d.Name("dgesv").c_str(), n, nrhs, a.data(), n, ipiv.data(), b.data(), n,
                    &info) == 0);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Ninf_call_info ci;
  REQUIRE(Ninf_get_call_info(&ci) == 0);
  CHECK(ci.error == NINF_OK);
  CHECK(std::string(ci.server).find(std::to_string(d.port())) != std::string::npos);
  CHECK(ci.threads >= 1);
  CHECK(ci.compute_seconds > 0);
  CHECK(ci.queue_seconds >= 0);
  CHECK(ci.queue_seconds < 1);  // alone on the server
  CHECK(ci.total_seconds >= ci.compute_seconds);
  CHECK(ci.total_seconds <= wall);
  CHECK(ci.work_flops == Approx(2.0 * n * n * n / 3 + 2.0 * n * n * nrhs));
  // a and b go out and come back; ipiv and info come back.
  CHECK(ci.send_bytes >= 8ull * (n * n + n));
  CHECK(ci.recv_bytes >= 8ull * (n * n + n) + 4ull * n);
}

TEST_CASE("calls_dgesv_singular_reports_info", "[e2e]") {
  E2EDaemon d;
  const int n = 4;
  std::vector<double> a(16, 0.0), b(4, 1.0);  // the zero matrix
  std::vector<int> ipiv(4);
  int info = 0;
  REQUIRE(Ninf_call(d.Name("dgesv").c_str(), n, 1, a.data(), n, ipiv.data(), b.data(), n, &info) ==
          0);
  CHECK(info == 1);  // LAPACK's own answer: U(1,1) is exactly zero
}

TEST_CASE("calls_dmmul_matches_dgemm", "[e2e]") {
  E2EDaemon d;
  const long n = 128;
  std::vector<double> A = RandomMatrix(n, n, 3), B = RandomMatrix(n, n, 4), C(n * n, 7.0),
                      ref(n * n);
  REQUIRE(Ninf_call(d.Name("dmmul").c_str(), n, A.data(), B.data(), C.data()) == 0);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, A.data(), n, B.data(), n,
              0.0, ref.data(), n);
  double maxdiff = 0;
  for (long i = 0; i < n * n; ++i) maxdiff = std::max(maxdiff, std::fabs(C[i] - ref[i]));
  CHECK(maxdiff < 1e-12);
}

TEST_CASE("calls_ep_class_s_verifies", "[e2e]") {
  E2EDaemon d;
  double sx = 0, sy = 0, q[10] = {0};
  REQUIRE(Ninf_call(d.Name("ep").c_str(), 24L, &sx, &sy, q) == 0);
  CHECK(std::fabs((sx - -3.247834652034740e+3) / -3.247834652034740e+3) <= 1e-8);
  CHECK(std::fabs((sy - -6.958407078382297e+3) / -6.958407078382297e+3) <= 1e-8);
  double pairs = 0;
  for (double c : q) {
    CHECK(c == std::floor(c));  // counts are exact integers
    pairs += c;
  }
  CHECK(pairs > 0.75 * (1 << 24));  // the polar method accepts pi/4 of the pairs
  CHECK(pairs < 0.80 * (1 << 24));
}

TEST_CASE("calls_null_echo_source_sink", "[e2e]") {
  E2EDaemon d;
  REQUIRE(Ninf_call(d.Name("null").c_str()) == 0);

  const long n = 1 << 17;  // 1 MiB of doubles
  std::vector<double> a(n);
  for (long i = 0; i < n; ++i) a[i] = 0.5 * i;
  std::vector<double> orig = a;
  REQUIRE(Ninf_call(d.Name("echo").c_str(), n, a.data()) == 0);
  CHECK(a == orig);

  std::vector<double> s(n, -1.0);
  REQUIRE(Ninf_call(d.Name("source").c_str(), n, s.data()) == 0);
  for (long i = 0; i < n; i += 997) CHECK(s[i] == static_cast<double>(i));
  REQUIRE(Ninf_call(d.Name("sink").c_str(), n, s.data()) == 0);

  // Zero-length arrays are legal calls too.
  REQUIRE(Ninf_call(d.Name("echo").c_str(), 0L, a.data()) == 0);
}

TEST_CASE("calls_async_wait_any_and_all", "[e2e]") {
  E2EDaemon d;
  double sx[3], sy[3], q[3][10];
  int ids[3];
  for (int i = 0; i < 3; ++i) {
    ids[i] = Ninf_call_async(d.Name("ep").c_str(), 20L, &sx[i], &sy[i], q[i]);
    REQUIRE(ids[i] >= 0);
  }
  int first = -2;
  REQUIRE(Ninf_wait_any(&first) == 0);
  CHECK((first == ids[0] || first == ids[1] || first == ids[2]));
  CHECK(Ninf_wait(first) == -1);  // already collected
  CHECK(Ninf_get_error() == NINF_ERR_INVALID_ID);
  REQUIRE(Ninf_wait_all() == 0);
  for (int i = 1; i < 3; ++i) {
    CHECK(sx[i] == sx[0]);  // same m, same generator: same sums
    CHECK(sy[i] == sy[0]);
  }
  int none = 5;
  CHECK(Ninf_wait_any(&none) == -1);
  CHECK(none == -1);
  CHECK(Ninf_wait(12345) == -1);
  CHECK(Ninf_get_error() == NINF_ERR_INVALID_ID);
}

TEST_CASE("calls_async_really_overlap", "[e2e]") {
  // Two async ep calls on a server with two slots run at the same time: the
  // daemon counts both running while neither has returned. (This asserts the
  // overlap itself, not a speed-up: how much two cores give depends on what
  // else the machine runs, and speed lives in bench/.) Each call gets one
  // core (thread_budget split): under the default adaptive budget a lone
  // call of a function whose executable has a thread library (ep has one in
  // the sanitizer build) takes both cores and the next waits for them.
  E2EDaemon d({"--slots", "2", "--thread-budget", "split"});
  double sx[2], sy[2], q[2][10];
  for (int i = 0; i < 2; ++i)
    REQUIRE(Ninf_call_async(d.Name("ep").c_str(), 26L, &sx[i], &sy[i], q[i]) >= 0);
  CHECK(d.WaitForStat("running", 2) == 2);
  REQUIRE(Ninf_wait_all() == 0);
  CHECK(sx[0] == sx[1]);
  CHECK(sy[0] == sy[1]);
}

TEST_CASE("calls_from_many_threads", "[e2e]") {
  E2EDaemon d;
  constexpr int kThreads = 8, kCalls = 5;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const long n = 1000 + t;
      std::vector<double> a(n);
      for (int c = 0; c < kCalls; ++c) {
        for (long i = 0; i < n; ++i) a[i] = t * 1e6 + c * 1e3 + i;
        std::vector<double> orig = a;
        if (Ninf_call(d.Name("echo").c_str(), n, a.data()) != 0 || a != orig) ++failures[t];
      }
    });
  for (auto &th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) CHECK(failures[t] == 0);
  // The executable reports CALL_DONE after the client has its result: poll.
  CHECK(d.WaitForStat("completed", kThreads * kCalls) >= kThreads * kCalls);
}

TEST_CASE("calls_unknown_function_and_bad_server", "[e2e]") {
  E2EDaemon d;
  CHECK(Ninf_call(d.Name("no_such_function").c_str(), 1) == -1);
  CHECK(Ninf_get_error() == NINF_ERR_FUNCTION_NOT_FOUND);
  CHECK(Ninf_call("ninf://127.0.0.1:1/null") == -1);
  CHECK(Ninf_get_error() == NINF_ERR_CONNECT);
  CHECK(Ninf_call("ninf://127.0.0.1:notaport/null") == -1);
  CHECK(Ninf_get_error() == NINF_ERR_INVALID_ARGUMENT);
  CHECK(Ninf_call(nullptr) == -1);
  CHECK(Ninf_get_error() == NINF_ERR_INVALID_ARGUMENT);
  // A NULL array is refused before anything is sent.
  CHECK(Ninf_call(d.Name("echo").c_str(), 10L, static_cast<double *>(nullptr)) == -1);
  CHECK(Ninf_get_error() == NINF_ERR_INVALID_ARGUMENT);
  REQUIRE(Ninf_call(d.Name("null").c_str()) == 0);
}

TEST_CASE("calls_per_call_maximum", "[e2e]") {
  E2EDaemon d({"--max-call-bytes", "1048576"});
  std::vector<double> a(1 << 17);  // exactly 1 MiB: allowed
  REQUIRE(Ninf_call(d.Name("echo").c_str(), long(a.size()), a.data()) == 0);
  std::vector<double> big((1 << 17) + 1);
  CHECK(Ninf_call(d.Name("echo").c_str(), long(big.size()), big.data()) == -1);
  CHECK(Ninf_get_error() == NINF_ERR_TOO_LARGE);
  REQUIRE(Ninf_call(d.Name("echo").c_str(), long(a.size()), a.data()) == 0);
  CHECK(d.ZombieChildren() == 0);
}

namespace {

// Bytes of address space this process has mapped (VmSize).
long AddressSpaceBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmSize:", 0) == 0) return std::stol(line.substr(7)) * 1024;
  return -1;
}

}  // namespace

// No exception crosses the C API: with too little address space left for a
// thread stack, Ninf_call_async's std::thread throws std::system_error; the
// call must fail with an error code (and leave no session behind), not
// terminate the program. Run in a child so the limit does not outlive it.
TEST_CASE("calls_exception_stops_at_the_c_api", "[e2e]") {
  E2EDaemon d;
  const std::string name = d.Name("null");
  REQUIRE(Ninf_call(name.c_str()) == 0);  // interface cached, connection code warm
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    rlimit limit{};
    limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(AddressSpaceBytes() + (4 << 20));
    if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(3);
    // glibc reuses the stacks of finished threads: start calls until no
    // stack is left, then the next std::thread must fail.
    int started = 0, id = 0;
    while (started < 64 && (id = Ninf_call_async(name.c_str())) >= 0) ++started;
    if (id >= 0) _exit(4);  // threads kept starting: the test proves nothing
    int code = Ninf_get_error();
    if (Ninf_wait_all() != 0) _exit(6);  // the calls that did start still complete
    int id_any = 0;
    bool no_session = Ninf_wait_any(&id_any) == -1 && id_any == -1;
    _exit((code == NINF_ERR_INTERNAL || code == NINF_ERR_NO_MEMORY) && no_session ? 0 : 5);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  INFO("child status " << status);
  REQUIRE(WIFEXITED(status));  // not killed by std::terminate's abort
  CHECK(WEXITSTATUS(status) == 0);
}

namespace {

std::string FileText(const std::string &path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Waits up to 5 s for `text` to appear in the daemon's log, `count` times.
bool WaitForLog(const std::string &log, const std::string &text, int count = 1) {
  for (int i = 0; i < 500; ++i) {
    const std::string all = FileText(log);
    int seen = 0;
    for (std::size_t at = all.find(text); at != std::string::npos; at = all.find(text, at + 1))
      ++seen;
    if (seen >= count) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace

TEST_CASE("calls_sighup_reloads_the_settings_that_can_change_live", "[e2e]") {
  char dir_template[] = "/tmp/ninf-reload-XXXXXX";
  REQUIRE(::mkdtemp(dir_template));
  const std::string dir = dir_template, config = dir + "/ninfd.toml", log = dir + "/ninfd.log";
  std::ofstream(config) << "call_wall_seconds = 600\nqueue_limit = 100\n";
  E2EDaemon d({"--config", config}, log);
  // A limit lowered in the file applies to the next call; a key that needs a
  // restart is named and keeps its value.
  std::ofstream(config) << "call_wall_seconds = 1\nqueue_limit = 5\n";
  ::kill(d.pid(), SIGHUP);
  REQUIRE(WaitForLog(log, "event=settings_reloaded applied=call_wall_seconds"));
  CHECK(WaitForLog(log, "event=settings_need_restart keys=queue_limit"));
  double sx = 0, sy = 0, q[10] = {};
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(Ninf_call(d.Name("ep").c_str(), 34L, &sx, &sy, q) != 0);  // minutes without the limit
  CHECK(Ninf_get_error() == NINF_ERR_LIMIT);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
  // A broken file changes nothing: the limit stays.
  std::ofstream(config) << "call_wall_seconds = \"soon\"\n";
  ::kill(d.pid(), SIGHUP);
  REQUIRE(WaitForLog(log, "event=reload_failed settings=config"));
  CHECK(WaitForLog(log, "ninfd.toml:1: call_wall_seconds = 'soon'"));
  CHECK(Ninf_call(d.Name("ep").c_str(), 34L, &sx, &sy, q) != 0);
  CHECK(Ninf_get_error() == NINF_ERR_LIMIT);
  std::filesystem::remove_all(dir);
}
