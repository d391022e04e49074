// GridRPC (GFD.52) conformance against a real ninfd: every function of
// grpc.h and every error case the issue names.
#include "client/grpc.h"

#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "client/ninf.h"
#include "tests/e2e/e2e_fixture.h"

namespace {

char *C(const std::string &s) { return const_cast<char *>(s.c_str()); }

std::string Server(const E2EDaemon &d) { return "127.0.0.1:" + std::to_string(d.port()); }

// A temporary file with `text`, removed at scope exit.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string &text) {
    char tmpl[] = "/tmp/ninf-grpc-XXXXXX";
    int fd = mkstemp(tmpl);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    close(fd);
    path = tmpl;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

// grpc_initialize / grpc_finalize around one test case.
struct Initialized {
  explicit Initialized(char *config = nullptr) {
    REQUIRE(grpc_initialize(config) == GRPC_NO_ERROR);
  }
  ~Initialized() { CHECK(grpc_finalize() == GRPC_NO_ERROR); }
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

TEST_CASE("grpc_not_initialized_and_twice", "[grpc]") {
  grpc_function_handle_t h;
  grpc_sessionid_t id;
  CHECK(grpc_function_handle_default(&h, C("null")) == GRPC_NOT_INITIALIZED);
  CHECK(grpc_function_handle_init(&h, C("localhost"), C("null")) == GRPC_NOT_INITIALIZED);
  CHECK(grpc_call(&h) == GRPC_NOT_INITIALIZED);
  CHECK(grpc_call_async(&h, &id) == GRPC_NOT_INITIALIZED);
  CHECK(grpc_wait(0) == GRPC_NOT_INITIALIZED);
  CHECK(grpc_wait_all() == GRPC_NOT_INITIALIZED);
  CHECK(grpc_probe(0) == GRPC_NOT_INITIALIZED);
  CHECK(grpc_cancel_all() == GRPC_NOT_INITIALIZED);
  CHECK(grpc_finalize() == GRPC_NOT_INITIALIZED);
  REQUIRE(grpc_initialize(nullptr) == GRPC_NO_ERROR);
  CHECK(grpc_initialize(nullptr) == GRPC_ALREADY_INITIALIZED);
  CHECK(grpc_finalize() == GRPC_NO_ERROR);
}

TEST_CASE("grpc_config_files", "[grpc]") {
  CHECK(grpc_initialize(C("/nonexistent/ninf-client.toml")) == GRPC_CONFIGFILE_NOT_FOUND);
  TempFile broken("default_server = \n");
  CHECK(grpc_initialize(C(broken.path)) == GRPC_CONFIGFILE_ERROR);
  TempFile unknown_key("colour = \"blue\"\n");
  CHECK(grpc_initialize(C(unknown_key.path)) == GRPC_CONFIGFILE_ERROR);
  CHECK_THAT(Ninf_get_error_detail(),
             Catch::Contains(unknown_key.path + ":1: unknown key 'colour'"));
  // A near miss gets a suggestion, and the line of the mistake.
  TempFile typo("connect_timeout = 5\nheartbaet = 1\n");
  CHECK(grpc_initialize(C(typo.path)) == GRPC_CONFIGFILE_ERROR);
  CHECK_THAT(Ninf_get_error_detail(),
             Catch::Contains(typo.path + ":2:") && Catch::Contains("did you mean 'heartbeat'?"));
  TempFile bad_timeout("\nsession_timeout = \"long\"\n");
  CHECK(grpc_initialize(C(bad_timeout.path)) == GRPC_CONFIGFILE_ERROR);
  CHECK_THAT(Ninf_get_error_detail(),
             Catch::Contains(bad_timeout.path + ":2:") && Catch::Contains("number of seconds"));
  TempFile bad_server("default_server = \"host:notaport\"\n");
  CHECK(grpc_initialize(C(bad_server.path)) == GRPC_CONFIGFILE_ERROR);

  E2EDaemon d;
  TempFile good("default_server = \"" + Server(d) +
                "\"\nconnect_timeout = 5\nheartbeat = 0.5\n"
                "session_timeout = 10\n[servers]\nhere = \"" +
                Server(d) + "\"\n");
  Initialized init(C(good.path));
  grpc_function_handle_t a, b;
  REQUIRE(grpc_function_handle_default(&a, C("null")) == GRPC_NO_ERROR);          // default_server
  REQUIRE(grpc_function_handle_init(&b, C("here"), C("null")) == GRPC_NO_ERROR);  // alias
  CHECK(grpc_call(&a) == GRPC_NO_ERROR);
  CHECK(grpc_call(&b) == GRPC_NO_ERROR);
  CHECK(grpc_function_handle_destruct(&a) == GRPC_NO_ERROR);
  CHECK(grpc_function_handle_destruct(&b) == GRPC_NO_ERROR);
}

TEST_CASE("grpc_handle_errors", "[grpc]") {
  E2EDaemon d;
  Initialized init;
  grpc_function_handle_t h;
  CHECK(grpc_function_handle_init(&h, C("127.0.0.1:1"), C("null")) == GRPC_SERVER_NOT_FOUND);
  CHECK(grpc_function_handle_init(&h, C("127.0.0.1:x"), C("null")) == GRPC_SERVER_NOT_FOUND);
  CHECK(grpc_function_handle_init(&h, C(Server(d)), C("no_such_function")) ==
        GRPC_FUNCTION_NOT_FOUND);
  CHECK(grpc_call(&h) == GRPC_INVALID_FUNCTION_HANDLE);  // the failed init left it invalid
  grpc_function_handle_t never = {};
  CHECK(grpc_function_handle_destruct(&never) == GRPC_INVALID_FUNCTION_HANDLE);
  CHECK(grpc_call(nullptr) == GRPC_INVALID_FUNCTION_HANDLE);
}

TEST_CASE("grpc_call_sync_and_async", "[grpc]") {
  E2EDaemon d;
  Initialized init;
  grpc_function_handle_t solve, ep;
  REQUIRE(grpc_function_handle_init(&solve, C(Server(d)), C("dgesv")) == GRPC_NO_ERROR);
  REQUIRE(grpc_function_handle_init(&ep, C(Server(d)), C("ep")) == GRPC_NO_ERROR);

  const int n = 3;
  double a[9] = {4, 1, 0, 1, 4, 1, 0, 1, 4}, b[3] = {5, 6, 5};  // solution: all ones
  int ipiv[3], info = -1;
  REQUIRE(grpc_call(&solve, n, 1, a, n, ipiv, b, n, &info) == GRPC_NO_ERROR);
  CHECK(info == 0);
  for (double x : b) CHECK(std::fabs(x - 1.0) < 1e-12);

  double sx = 0, sy = 0, q[10];
  grpc_sessionid_t id = GRPC_SESSIONID_VOID;
  REQUIRE(grpc_call_async(&ep, &id, 24L, &sx, &sy, q) == GRPC_NO_ERROR);
  REQUIRE(id != GRPC_SESSIONID_VOID);
  CHECK(grpc_probe(id) == GRPC_NOT_COMPLETED);  // class S takes ~0.3 s
  grpc_sessionid_t done = 99;
  CHECK(grpc_probe_or(&id, 1, &done) == GRPC_NONE_COMPLETED);
  CHECK(done == GRPC_SESSIONID_VOID);
  grpc_function_handle_t *hp = nullptr;
  REQUIRE(grpc_get_handle(&hp, id) == GRPC_NO_ERROR);
  CHECK(hp == &ep);
  // Running: no error so far (as Ninf-G answers); grpc_probe tells completion.
  CHECK(grpc_get_error(id) == GRPC_NO_ERROR);
  REQUIRE(grpc_wait(id) == GRPC_NO_ERROR);
  CHECK(std::fabs(sx + 3.247834652034740e+3) < 1e-5);
  CHECK(grpc_get_error(id) == GRPC_NO_ERROR);
  CHECK(grpc_probe(id) == GRPC_NO_ERROR);

  REQUIRE(grpc_call_async(&ep, &id, 16L, &sx, &sy, q) == GRPC_NO_ERROR);
  for (int i = 0; i < 200 && grpc_probe(id) == GRPC_NOT_COMPLETED; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(grpc_probe_or(&id, 1, &done) == GRPC_NO_ERROR);
  CHECK(done == id);
  CHECK(grpc_wait(id) == GRPC_NO_ERROR);

  CHECK(grpc_function_handle_destruct(&solve) == GRPC_NO_ERROR);
  CHECK(grpc_function_handle_destruct(&ep) == GRPC_NO_ERROR);
}

TEST_CASE("grpc_invalid_session_ids", "[grpc]") {
  E2EDaemon d;
  Initialized init;
  grpc_sessionid_t id = 0;
  CHECK(grpc_wait(12345) == GRPC_INVALID_SESSION_ID);
  CHECK(grpc_probe(12345) == GRPC_INVALID_SESSION_ID);
  CHECK(grpc_cancel(12345) == GRPC_INVALID_SESSION_ID);
  CHECK(grpc_get_error(12345) == GRPC_INVALID_SESSION_ID);
  grpc_function_handle_t *hp;
  CHECK(grpc_get_handle(&hp, 12345) == GRPC_INVALID_SESSION_ID);
  grpc_sessionid_t ids[] = {12345, 12346};
  CHECK(grpc_wait_or(ids, 2, &id) == GRPC_INVALID_SESSION_ID);
  CHECK(grpc_wait_and(ids, 2) == GRPC_INVALID_SESSION_ID);
  CHECK(grpc_wait_any(&id) == GRPC_NO_ERROR);  // nothing outstanding
  CHECK(id == GRPC_SESSIONID_VOID);
  CHECK(grpc_get_failed_sessionid(&id) == GRPC_NO_ERROR);
  CHECK(id == GRPC_SESSIONID_VOID);
}

TEST_CASE("grpc_set_waits_record_failures", "[grpc]") {
  // A 1 MiB per-call maximum makes a large echo fail on the server.
  E2EDaemon d({"--max-call-bytes", "1048576"});
  Initialized init;
  grpc_function_handle_t small_h, big_h, third_h;
  REQUIRE(grpc_function_handle_init(&small_h, C(Server(d)), C("echo")) == GRPC_NO_ERROR);
  REQUIRE(grpc_function_handle_init(&big_h, C(Server(d)), C("echo")) == GRPC_NO_ERROR);
  REQUIRE(grpc_function_handle_init(&third_h, C(Server(d)), C("echo")) == GRPC_NO_ERROR);
  std::vector<double> small(16, 1.0), big(1 << 18, 2.0), third(8, 3.0);
  grpc_sessionid_t ids[3];
  REQUIRE(grpc_call_async(&small_h, &ids[0], long(small.size()), small.data()) == GRPC_NO_ERROR);
  REQUIRE(grpc_call_async(&big_h, &ids[1], long(big.size()), big.data()) == GRPC_NO_ERROR);
  REQUIRE(grpc_call_async(&third_h, &ids[2], long(third.size()), third.data()) == GRPC_NO_ERROR);
  CHECK(grpc_wait_and(ids, 3) != GRPC_NO_ERROR);
  CHECK(grpc_get_error(ids[0]) == GRPC_NO_ERROR);
  CHECK(grpc_get_error(ids[1]) == GRPC_RPC_REFUSED);
  grpc_sessionid_t failed = GRPC_SESSIONID_VOID;
  CHECK(grpc_get_failed_sessionid(&failed) == GRPC_NO_ERROR);
  CHECK(failed == ids[1]);
  CHECK(grpc_get_failed_sessionid(&failed) == GRPC_NO_ERROR);
  CHECK(failed == GRPC_SESSIONID_VOID);

  // wait_or returns one of the set; wait_all and wait_any record failures too.
  REQUIRE(grpc_call_async(&small_h, &ids[0], long(small.size()), small.data()) == GRPC_NO_ERROR);
  REQUIRE(grpc_call_async(&big_h, &ids[1], long(big.size()), big.data()) == GRPC_NO_ERROR);
  grpc_sessionid_t first = GRPC_SESSIONID_VOID;
  grpc_error_t e = grpc_wait_or(ids, 2, &first);
  CHECK((first == ids[0] || first == ids[1]));
  CHECK(e == (first == ids[0] ? GRPC_NO_ERROR : GRPC_RPC_REFUSED));
  CHECK(grpc_wait_all() == (first == ids[0] ? GRPC_SESSION_FAILED : GRPC_NO_ERROR));
  CHECK(grpc_get_failed_sessionid(&failed) == GRPC_NO_ERROR);
  CHECK(failed == ids[1]);

  REQUIRE(grpc_call_async(&big_h, &ids[2], long(big.size()), big.data()) == GRPC_NO_ERROR);
  grpc_sessionid_t any = GRPC_SESSIONID_VOID;
  CHECK(grpc_wait_any(&any) == GRPC_RPC_REFUSED);
  CHECK(any == ids[2]);
  CHECK(grpc_get_failed_sessionid(&failed) == GRPC_NO_ERROR);
  CHECK(failed == ids[2]);
  // The handle recovers after the failed call.
  CHECK(grpc_call(&big_h, long(small.size()), small.data()) == GRPC_NO_ERROR);
  grpc_function_handle_destruct(&small_h);
  grpc_function_handle_destruct(&big_h);
  grpc_function_handle_destruct(&third_h);
}

TEST_CASE("grpc_error_strings", "[grpc]") {
  CHECK(std::string(grpc_error_string(GRPC_NO_ERROR)) == "no error");
  CHECK(std::string(grpc_error_string(GRPC_FUNCTION_NOT_FOUND)) == "function not found");
  CHECK(std::string(grpc_error_string(GRPC_SESSION_CANCELLED)) == "session cancelled");
  CHECK(std::string(grpc_error_string(9999)) == "unknown error code");
  CHECK(std::string(grpc_error_string(-3)) == "unknown error code");
}

TEST_CASE("grpc_handle_reuses_one_executable", "[grpc]") {
  E2EDaemon d;
  Initialized init;
  grpc_function_handle_t h;
  REQUIRE(grpc_function_handle_init(&h, C(Server(d)), C("null")) == GRPC_NO_ERROR);
  REQUIRE(grpc_call(&h) == GRPC_NO_ERROR);
  long started = d.Stat("executables_started");
  int failures = 0;
  for (int i = 0; i < 1000; ++i) failures += grpc_call(&h) != GRPC_NO_ERROR;
  CHECK(failures == 0);
  CHECK(d.Stat("executables_started") == started);  // 1000 calls, no new executable
  CHECK(d.WaitForStat("completed", 1001) >= 1001);
  CHECK(grpc_function_handle_destruct(&h) == GRPC_NO_ERROR);
}

TEST_CASE("grpc_cancel_stops_the_remote_process", "[grpc]") {
  E2EDaemon d({"--warm-executables", "0"});
  Initialized init;
  grpc_function_handle_t h;
  REQUIRE(grpc_function_handle_init(&h, C(Server(d)), C("ep")) == GRPC_NO_ERROR);
  double sx, sy, q[10];
  grpc_sessionid_t id;
  REQUIRE(grpc_call_async(&h, &id, 32L, &sx, &sy, q) == GRPC_NO_ERROR);  // minutes of work
  REQUIRE(d.WaitForStat("running", 1) == 1);
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(grpc_cancel(id) == GRPC_NO_ERROR);
  // The wait says the session failed; grpc_get_error keeps why (Ninf-G's way).
  CHECK(grpc_wait(id) == GRPC_SESSION_FAILED);
  CHECK(grpc_get_error(id) == GRPC_SESSION_CANCELLED);
  CHECK(d.WaitForNoChildren(1000));
  CHECK(Seconds(t0) < 1.5);
  CHECK(d.WaitForStat("cancelled", 1) >= 1);
  // The handle starts a new executable for its next call.
  REQUIRE(grpc_call(&h, 10L, &sx, &sy, q) == GRPC_NO_ERROR);
  grpc_function_handle_destruct(&h);
}

TEST_CASE("grpc_executable_killed_mid_call", "[grpc]") {
  E2EDaemon d({"--warm-executables", "0"});
  Initialized init;
  grpc_function_handle_t h;
  REQUIRE(grpc_function_handle_init(&h, C(Server(d)), C("ep")) == GRPC_NO_ERROR);
  double sx, sy, q[10];
  grpc_sessionid_t id;
  REQUIRE(grpc_call_async(&h, &id, 32L, &sx, &sy, q) == GRPC_NO_ERROR);
  REQUIRE(d.WaitForStat("running", 1) == 1);
  std::vector<pid_t> children = d.Children();
  REQUIRE(children.size() == 1);
  ::kill(children[0], SIGKILL);
  CHECK(grpc_wait(id) == GRPC_SESSION_FAILED);
  CHECK(d.ZombieChildren() == 0);
  // The daemon keeps serving, and the same handle recovers.
  REQUIRE(grpc_call(&h, 10L, &sx, &sy, q) == GRPC_NO_ERROR);
  grpc_function_handle_destruct(&h);
}

TEST_CASE("grpc_daemon_stopped_mid_call", "[grpc]") {
  auto d = std::make_unique<E2EDaemon>(
      std::vector<std::string>{"--grace-seconds", "1", "--warm-executables", "0"});
  TempFile config("heartbeat = 0.2\nsession_timeout = 2\n");
  Initialized init(C(config.path));
  grpc_function_handle_t h;
  REQUIRE(grpc_function_handle_init(&h, C(Server(*d)), C("ep")) == GRPC_NO_ERROR);
  double sx, sy, q[10];
  grpc_sessionid_t id;
  REQUIRE(grpc_call_async(&h, &id, 32L, &sx, &sy, q) == GRPC_NO_ERROR);
  REQUIRE(d->WaitForStat("running", 1) == 1);
  auto t0 = std::chrono::steady_clock::now();
  d.reset();  // SIGTERM; the call outlives the 1 s grace and is killed
  grpc_error_t e = grpc_wait(id);
  CHECK(e != GRPC_NO_ERROR);
  CHECK(Seconds(t0) < 4.0);  // grace + session timeout at most
  grpc_function_handle_destruct(&h);
}

TEST_CASE("grpc_stalled_executable_times_out", "[grpc]") {
  // A stopped executable neither computes nor sends heartbeats: the client
  // gives up after session_timeout instead of hanging.
  E2EDaemon d({"--warm-executables", "0"});
  TempFile config("heartbeat = 0.2\nsession_timeout = 1.5\n");
  Initialized init(C(config.path));
  grpc_function_handle_t h;
  REQUIRE(grpc_function_handle_init(&h, C(Server(d)), C("ep")) == GRPC_NO_ERROR);
  double sx, sy, q[10];
  grpc_sessionid_t id;
  REQUIRE(grpc_call_async(&h, &id, 32L, &sx, &sy, q) == GRPC_NO_ERROR);
  REQUIRE(d.WaitForStat("running", 1) == 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(800));  // heartbeats keep it alive
  CHECK(grpc_probe(id) == GRPC_NOT_COMPLETED);
  std::vector<pid_t> children = d.Children();
  REQUIRE(children.size() == 1);
  auto t0 = std::chrono::steady_clock::now();
  ::kill(children[0], SIGSTOP);
  CHECK(grpc_wait(id) == GRPC_COMMUNICATION_FAILED);
  CHECK(Seconds(t0) < 3.0);
  ::kill(children[0], SIGKILL);
  ::kill(children[0], SIGCONT);
  grpc_function_handle_destruct(&h);
}

TEST_CASE("grpc_heartbeats_keep_long_calls_alive", "[grpc]") {
  // ep class W takes longer than the session timeout here; only the
  // executable's heartbeats keep the client from giving up.
  E2EDaemon d;
  TempFile config("heartbeat = 0.05\nsession_timeout = 0.2\n");
  Initialized init(C(config.path));
  grpc_function_handle_t h;
  REQUIRE(grpc_function_handle_init(&h, C(Server(d)), C("ep")) == GRPC_NO_ERROR);
  double sx = 0, sy = 0, q[10];
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(grpc_call(&h, 25L, &sx, &sy, q) == GRPC_NO_ERROR);
  INFO("ep class W took " << Seconds(t0) << " s");
  CHECK(Seconds(t0) > 0.2);  // longer than the session timeout: heartbeats were needed
  CHECK(std::fabs((sx - -2.863319731645753e+3) / -2.863319731645753e+3) <= 1e-8);
  grpc_function_handle_destruct(&h);
}

// A handle destructed while its session runs: the session completes with its
// result (before the fix the session thread used the freed handle).
TEST_CASE("grpc_destruct_with_a_running_session", "[grpc]") {
  E2EDaemon d({"--warm-executables", "0"});
  Initialized init;
  grpc_function_handle_t h;
  REQUIRE(grpc_function_handle_init(&h, C(Server(d)), C("ep")) == GRPC_NO_ERROR);
  double sx = 0, sy = 0, q[10];
  grpc_sessionid_t id;
  REQUIRE(grpc_call_async(&h, &id, 24L, &sx, &sy, q) == GRPC_NO_ERROR);
  REQUIRE(grpc_function_handle_destruct(&h) == GRPC_NO_ERROR);
  CHECK(grpc_function_handle_destruct(&h) == GRPC_INVALID_FUNCTION_HANDLE);
  REQUIRE(grpc_wait(id) == GRPC_NO_ERROR);
  CHECK(std::fabs(sx + 3.247834652034740e+3) < 1e-5);
  // The executable ends with the session's last reference.
  CHECK(d.WaitForNoChildren(5000));
  CHECK(d.ZombieChildren() == 0);
}

// grpc_cancel right after grpc_call_async, before the session thread has
// connected: the cancel must not be lost (the call would run for minutes).
TEST_CASE("grpc_cancel_before_the_session_connects", "[grpc]") {
  E2EDaemon d({"--warm-executables", "0"});
  Initialized init;
  for (int round = 0; round < 5; ++round) {
    grpc_function_handle_t h;
    REQUIRE(grpc_function_handle_init(&h, C(Server(d)), C("ep")) == GRPC_NO_ERROR);
    double sx, sy, q[10];
    grpc_sessionid_t id;
    auto t0 = std::chrono::steady_clock::now();
    REQUIRE(grpc_call_async(&h, &id, 32L, &sx, &sy, q) == GRPC_NO_ERROR);  // minutes of work
    REQUIRE(grpc_cancel(id) == GRPC_NO_ERROR);
    CHECK(grpc_wait(id) == GRPC_SESSION_FAILED);
    CHECK(grpc_get_error(id) == GRPC_SESSION_CANCELLED);
    CHECK(Seconds(t0) < 3.0);
    CHECK(d.WaitForNoChildren(2000));
    // The handle still works afterwards.
    REQUIRE(grpc_call(&h, 10L, &sx, &sy, q) == GRPC_NO_ERROR);
    REQUIRE(grpc_function_handle_destruct(&h) == GRPC_NO_ERROR);
  }
  CHECK(d.ZombieChildren() == 0);
}

// Cancelling one session never touches another session's call on the same
// handle (a cancel used to shut down whatever call the handle was running).
TEST_CASE("grpc_cancel_is_per_session", "[grpc]") {
  E2EDaemon d;
  Initialized init;
  grpc_function_handle_t h;
  REQUIRE(grpc_function_handle_init(&h, C(Server(d)), C("ep")) == GRPC_NO_ERROR);
  double sx1 = 0, sy1, q1[10], sx2, sy2, q2[10];
  grpc_sessionid_t first, second;
  REQUIRE(grpc_call_async(&h, &first, 24L, &sx1, &sy1, q1) == GRPC_NO_ERROR);
  REQUIRE(grpc_call_async(&h, &second, 24L, &sx2, &sy2, q2) == GRPC_NO_ERROR);  // waits for first
  REQUIRE(grpc_cancel(second) == GRPC_NO_ERROR);
  CHECK(grpc_wait(first) == GRPC_NO_ERROR);
  CHECK(std::fabs(sx1 + 3.247834652034740e+3) < 1e-5);
  CHECK(grpc_wait(second) == GRPC_SESSION_FAILED);
  CHECK(grpc_get_error(second) == GRPC_SESSION_CANCELLED);
  REQUIRE(grpc_function_handle_destruct(&h) == GRPC_NO_ERROR);
}

// grpc_get_failed_sessionid reports failures of the set waits (wait_and,
// wait_or, wait_all, wait_any), not of the single grpc_wait.
TEST_CASE("grpc_single_wait_is_not_a_failed_session", "[grpc]") {
  E2EDaemon d({"--max-call-bytes", "1048576"});
  Initialized init;
  grpc_function_handle_t h;
  REQUIRE(grpc_function_handle_init(&h, C(Server(d)), C("echo")) == GRPC_NO_ERROR);
  std::vector<double> big(1 << 18, 2.0);
  grpc_sessionid_t id;
  REQUIRE(grpc_call_async(&h, &id, long(big.size()), big.data()) == GRPC_NO_ERROR);
  CHECK(grpc_wait(id) == GRPC_RPC_REFUSED);
  grpc_sessionid_t failed = 12345;
  CHECK(grpc_get_failed_sessionid(&failed) == GRPC_NO_ERROR);
  CHECK(failed == GRPC_SESSIONID_VOID);
  grpc_function_handle_destruct(&h);
}
