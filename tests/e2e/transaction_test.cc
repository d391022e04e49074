// Transaction blocks (docs/transactions.md) against one real ninfd: calls
// are recorded and run at the end; random blocks with random aliasing end
// exactly as running their calls one by one; a failed block leaves the
// caller's memory as it was; misuse is refused.
#include <stdio.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "client/ninf.h"
#include "tests/e2e/e2e_fixture.h"

namespace {

std::vector<double> Random(std::size_t n, std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (double &x : v) x = u(rng);
  return v;
}

// What one remote call does to the caller's memory: its inputs are copied
// when sent, its results written back after, so aliased arguments behave
// as copy-in, compute, copy-out.
void LocalDmmul(long n, const double *a, const double *b, double *c) {
  std::vector<double> A(a, a + n * n), B(b, b + n * n), C(static_cast<std::size_t>(n * n), 0.0);
  for (long i = 0; i < n; ++i)
    for (long k = 0; k < n; ++k)
      for (long j = 0; j < n; ++j) C[i * n + j] += A[i * n + k] * B[k * n + j];
  std::memcpy(c, C.data(), C.size() * sizeof(double));
}

void LocalDaxpy(long n, double alpha, const double *x, double *y) {
  std::vector<double> X(x, x + n), Y(y, y + n);
  for (long i = 0; i < n; ++i) Y[i] += alpha * X[i];
  std::memcpy(y, Y.data(), Y.size() * sizeof(double));
}

// One random call over a pool of doubles: its function and where its
// arrays start (offsets into the pool, so that they overlap at random).
struct RandomCall {
  int kind = 0;  // 0 dmmul, 1 daxpy, 2 echo
  long n = 0;
  double alpha = 0;
  std::size_t a = 0, b = 0, c = 0;
};

RandomCall Draw(std::mt19937_64 &rng, std::size_t pool) {
  RandomCall r;
  r.kind = static_cast<int>(rng() % 3);
  r.n = r.kind == 0 ? 2 + static_cast<long>(rng() % 3) : 1 + static_cast<long>(rng() % 24);
  r.alpha = 0.5 + static_cast<double>(rng() % 4);
  const std::size_t span = static_cast<std::size_t>(r.kind == 0 ? r.n * r.n : r.n);
  r.a = rng() % (pool - span);
  r.b = rng() % (pool - span);
  r.c = rng() % (pool - span);
  return r;
}

int Call(const E2EDaemon &d, const RandomCall &r, double *pool) {
  switch (r.kind) {
    case 0:
      return Ninf_call(d.Name("dmmul").c_str(), r.n, pool + r.a, pool + r.b, pool + r.c);
    case 1:
      return Ninf_call(d.Name("daxpy").c_str(), r.n, r.alpha, pool + r.a, pool + r.b);
    default:
      return Ninf_call(d.Name("echo").c_str(), r.n, pool + r.a);
  }
}

void Local(const RandomCall &r, double *pool) {
  switch (r.kind) {
    case 0:
      return LocalDmmul(r.n, pool + r.a, pool + r.b, pool + r.c);
    case 1:
      return LocalDaxpy(r.n, r.alpha, pool + r.a, pool + r.b);
    default:
      return;  // echo returns its array unchanged
  }
}

}  // namespace

TEST_CASE("transaction_calls_run_at_the_end", "[e2e][transaction]") {
  E2EDaemon d;
  const long n = 8;
  std::mt19937_64 rng(1);
  std::vector<double> a = Random(n * n, rng), b = Random(n * n, rng), c(n * n, 0.0), e(n * n, 0.0);
  REQUIRE(Ninf_transaction_begin() == 0);
  CHECK(Ninf_transaction_active() == 1);
  REQUIRE(Ninf_call(d.Name("dmmul").c_str(), n, a.data(), b.data(), c.data()) == 0);
  REQUIRE(Ninf_call(d.Name("dmmul").c_str(), n, c.data(), b.data(), e.data()) == 0);
  // Recorded, not run: the caller's arrays and the server are untouched.
  CHECK(c[0] == 0.0);
  CHECK(d.Stat("function.dmmul.calls") <= 0);
  REQUIRE(Ninf_transaction_end() == 0);
  CHECK(Ninf_transaction_active() == 0);
  std::vector<double> want_c(n * n), want_e(n * n);
  LocalDmmul(n, a.data(), b.data(), want_c.data());
  LocalDmmul(n, want_c.data(), b.data(), want_e.data());
  for (long i = 0; i < n * n; ++i) {
    CHECK(c[i] == Approx(want_c[i]).margin(1e-12));
    CHECK(e[i] == Approx(want_e[i]).margin(1e-12));
  }
  REQUIRE(Ninf_transaction_calls() == 2);
  Ninf_call_info info;
  REQUIRE(Ninf_transaction_call_info(1, &info) == 0);
  CHECK(info.error == NINF_OK);
  CHECK(std::string(info.server).find(std::to_string(d.port())) != std::string::npos);
  CHECK(std::string(Ninf_transaction_call_detail(1)).empty());
  CHECK(d.WaitForStat("function.dmmul.calls", 2) == 2);
}

TEST_CASE("transaction_random_blocks_equal_sequential_execution", "[e2e][transaction]") {
  // Property: a block of random dmmul/daxpy/echo calls whose arrays overlap
  // at random (aliasing, partial overlap, INOUT chains) leaves the pool as
  // running the same calls in program order does.
  E2EDaemon d;
  std::mt19937_64 rng(20261123);
  const std::size_t pool_size = 96;
  for (int round = 0; round < 25; ++round) {
    std::vector<double> pool = Random(pool_size, rng);
    std::vector<double> want = pool;
    const int calls = 2 + static_cast<int>(rng() % 7);
    std::vector<RandomCall> block;
    for (int i = 0; i < calls; ++i) block.push_back(Draw(rng, pool_size));
    REQUIRE(Ninf_transaction_begin() == 0);
    for (const RandomCall &r : block) REQUIRE(Call(d, r, pool.data()) == 0);
    INFO("round " << round << ", " << calls << " calls");
    REQUIRE(Ninf_transaction_end() == 0);
    for (const RandomCall &r : block) Local(r, want.data());
    for (std::size_t i = 0; i < pool_size; ++i) REQUIRE(pool[i] == Approx(want[i]).margin(1e-9));
  }
}

TEST_CASE("transaction_random_blocks_with_discards_equal_sequential_execution",
          "[e2e][transaction]") {
  // Property, with forwarding in play: calls on a few equal-sized slots (so
  // that one call's result is often another's whole input), some shifted by
  // half a slot (partial overlaps), and random slots discarded. The pool
  // must end as sequential execution leaves it, except that discarded
  // slots keep their old values; kept arrays must all be released.
  E2EDaemon d;
  std::mt19937_64 rng(20261124);
  constexpr std::size_t kSlot = 16, kSlots = 6;
  long kept = 0;
  for (int round = 0; round < 30; ++round) {
    std::vector<double> pool = Random(kSlot * (kSlots + 1), rng);
    const std::vector<double> before = pool;
    std::vector<double> want = pool;
    auto place = [&] {
      std::size_t at = (rng() % kSlots) * kSlot;
      return rng() % 6 == 0 ? at + kSlot / 2 : at;  // now and then across two slots
    };
    const int calls = 2 + static_cast<int>(rng() % 6);
    std::vector<RandomCall> block;
    for (int i = 0; i < calls; ++i) {
      RandomCall r;
      r.kind = static_cast<int>(rng() % 3);
      r.n = r.kind == 0 ? 4 : static_cast<long>(kSlot);
      r.alpha = 0.5 + static_cast<double>(rng() % 4);
      r.a = place(), r.b = place(), r.c = place();
      block.push_back(r);
    }
    REQUIRE(Ninf_transaction_begin() == 0);
    for (const RandomCall &r : block) REQUIRE(Call(d, r, pool.data()) == 0);
    // Discard some slots that a call writes (its output starts there).
    std::vector<std::size_t> discarded;
    for (const RandomCall &r : block) {
      const std::size_t out = r.kind == 0 ? r.c : r.kind == 1 ? r.b : r.a;
      if (out % kSlot != 0 || rng() % 2) continue;
      bool seen = false;
      for (std::size_t x : discarded) seen = seen || x == out;
      if (!seen && Ninf_transaction_discard(pool.data() + out) == 0) discarded.push_back(out);
    }
    INFO("round " << round << ", " << calls << " calls, " << discarded.size() << " discarded");
    REQUIRE(Ninf_transaction_end() == 0);
    for (const RandomCall &r : block) Local(r, want.data());
    for (std::size_t x : discarded)
      for (std::size_t i = x; i < x + kSlot; ++i) want[i] = before[i];
    for (std::size_t i = 0; i < pool.size(); ++i) REQUIRE(pool[i] == Approx(want[i]).margin(1e-9));
    kept = d.Stat("store_stored");
  }
  CHECK(kept > 0);  // some rounds did forward
  CHECK(d.WaitForStat("store_released", kept) == kept);
  CHECK(d.Stat("store_entries") == 0);
}

TEST_CASE("transaction_discarded_intermediate_is_not_written_back", "[e2e][transaction]") {
  E2EDaemon d;
  const long n = 4;
  std::mt19937_64 rng(2);
  std::vector<double> a = Random(n * n, rng), b = Random(n * n, rng), tmp(n * n, -7.0),
                      g(n * n, 0.0);
  REQUIRE(Ninf_transaction_begin() == 0);
  REQUIRE(Ninf_call(d.Name("dmmul").c_str(), n, a.data(), b.data(), tmp.data()) == 0);
  REQUIRE(Ninf_call(d.Name("dmmul").c_str(), n, tmp.data(), b.data(), g.data()) == 0);
  REQUIRE(Ninf_transaction_discard(tmp.data()) == 0);
  CHECK(Ninf_transaction_discard(a.data() + 1) == -1);  // no recorded array starts there
  CHECK(Ninf_get_error() == NINF_ERR_INVALID_ARGUMENT);
  REQUIRE(Ninf_transaction_end() == 0);
  std::vector<double> want_tmp(n * n), want_g(n * n);
  LocalDmmul(n, a.data(), b.data(), want_tmp.data());
  LocalDmmul(n, want_tmp.data(), b.data(), want_g.data());
  for (long i = 0; i < n * n; ++i) {
    CHECK(tmp[i] == -7.0);
    CHECK(g[i] == Approx(want_g[i]).margin(1e-12));
  }
}

TEST_CASE("transaction_intermediates_never_cross_the_client_connection", "[e2e][transaction]") {
  // G = ((A * B) * D) * F with C and E discarded: C and E stay on the
  // server (kept, then read by the next call's executable), so the client's
  // connection carries A, B, D, F in and G out, nothing more.
  E2EDaemon d;
  const long n = 30;
  const uint64_t matrix = n * n * sizeof(double);
  std::mt19937_64 rng(5);
  std::vector<double> a = Random(n * n, rng), b = Random(n * n, rng), dd = Random(n * n, rng),
                      f = Random(n * n, rng), c(n * n, 3.0), e(n * n, 4.0), g(n * n, 0.0);
  const long in0 = std::max(0L, d.Stat("bytes_in")), out0 = std::max(0L, d.Stat("bytes_out"));
  REQUIRE(Ninf_transaction_begin() == 0);
  REQUIRE(Ninf_call(d.Name("dmmul").c_str(), n, a.data(), b.data(), c.data()) == 0);
  REQUIRE(Ninf_call(d.Name("dmmul").c_str(), n, c.data(), dd.data(), e.data()) == 0);
  REQUIRE(Ninf_call(d.Name("dmmul").c_str(), n, e.data(), f.data(), g.data()) == 0);
  REQUIRE(Ninf_transaction_discard(c.data()) == 0);
  REQUIRE(Ninf_transaction_discard(e.data()) == 0);
  REQUIRE(Ninf_transaction_end() == 0);
  std::vector<double> want_c(n * n), want_e(n * n), want_g(n * n);
  LocalDmmul(n, a.data(), b.data(), want_c.data());
  LocalDmmul(n, want_c.data(), dd.data(), want_e.data());
  LocalDmmul(n, want_e.data(), f.data(), want_g.data());
  for (long i = 0; i < n * n; ++i) {
    CHECK(g[i] == Approx(want_g[i]).margin(1e-9));
    CHECK(c[i] == 3.0);
    CHECK(e[i] == 4.0);
  }
  // Arrays only; each frame adds its header and message (< 256 bytes). The
  // counters come from CALL_DONE, which may follow the client's result.
  REQUIRE(d.WaitForStat("function.dmmul.calls", 3) == 3);
  const long in = d.Stat("bytes_in") - in0, out = d.Stat("bytes_out") - out0;
  CHECK(in >= static_cast<long>(4 * matrix));
  CHECK(in < static_cast<long>(5 * matrix));
  CHECK(out >= static_cast<long>(matrix));
  CHECK(out < static_cast<long>(2 * matrix));
  // Kept twice, read twice (server to server), released at the end.
  CHECK(d.Stat("store_stored") == 2);
  CHECK(d.Stat("store_served_bytes") == static_cast<long>(2 * matrix));
  CHECK(d.WaitForStat("store_released", 2) == 2);
  CHECK(d.Stat("store_entries") == 0);
}

TEST_CASE("transaction_failed_call_leaves_memory_as_before", "[e2e][transaction]") {
  // A server that takes at most 64 KiB per call: the middle call of the
  // chain (three 100 x 100 matrices) is refused when it runs.
  E2EDaemon d({"--max-call-bytes", "64K"});
  std::mt19937_64 rng(3);
  std::vector<double> x = Random(16, rng), y = Random(16, rng), big = Random(100 * 100, rng),
                      out(100 * 100, 5.0);
  const std::vector<double> y0 = y, out0 = out;
  REQUIRE(Ninf_transaction_begin() == 0);
  REQUIRE(Ninf_call(d.Name("daxpy").c_str(), 16L, 2.0, x.data(), y.data()) == 0);
  REQUIRE(Ninf_call(d.Name("dmmul").c_str(), 100L, big.data(), big.data(), out.data()) == 0);
  REQUIRE(Ninf_call(d.Name("daxpy").c_str(), 16L, 1.0, out.data(), y.data()) == 0);
  CHECK(Ninf_transaction_end() == -1);
  CHECK(Ninf_get_error() == NINF_ERR_TOO_LARGE);
  CHECK(std::string(Ninf_get_error_detail()).find("call 1 (dmmul)") != std::string::npos);
  CHECK(y == y0);  // call 0 succeeded, but nothing is half-written
  CHECK(out == out0);
  REQUIRE(Ninf_transaction_calls() == 3);
  Ninf_call_info info;
  REQUIRE(Ninf_transaction_call_info(0, &info) == 0);
  CHECK(info.error == NINF_OK);
  REQUIRE(Ninf_transaction_call_info(1, &info) == 0);
  CHECK(info.error == NINF_ERR_TOO_LARGE);
  REQUIRE(Ninf_transaction_call_info(2, &info) == 0);
  CHECK(info.error == NINF_ERR_CANCELLED);
  CHECK(std::string(Ninf_transaction_call_detail(2)).find("not run") != std::string::npos);
  CHECK(Ninf_transaction_call_info(3, &info) == -1);
  CHECK(d.ZombieChildren() == 0);
}

TEST_CASE("transaction_misuse_is_refused", "[e2e][transaction]") {
  E2EDaemon d;
  CHECK(Ninf_transaction_end() == -1);
  CHECK(Ninf_get_error() == NINF_ERR_INVALID_ARGUMENT);
  CHECK(Ninf_transaction_discard(&d) == -1);
  REQUIRE(Ninf_transaction_begin() == 0);
  CHECK(Ninf_transaction_begin() == -1);
  CHECK(Ninf_get_error() == NINF_ERR_INVALID_ARGUMENT);
  double y[4] = {1, 2, 3, 4};
  CHECK(Ninf_call_async(d.Name("echo").c_str(), 4L, y) == -1);
  CHECK(Ninf_get_error() == NINF_ERR_INVALID_ARGUMENT);
  // An error found while recording fails that Ninf_call only.
  CHECK(Ninf_call(d.Name("no_such_function").c_str(), 4L, y) == -1);
  CHECK(Ninf_get_error() == NINF_ERR_FUNCTION_NOT_FOUND);
  CHECK(Ninf_call(d.Name("echo").c_str(), 4L, static_cast<double *>(nullptr)) == -1);
  REQUIRE(Ninf_call(d.Name("daxpy").c_str(), 4L, 1.0, y, y) == 0);  // y = 2y
  REQUIRE(Ninf_transaction_end() == 0);
  CHECK(y[3] == 8.0);
  CHECK(Ninf_transaction_calls() == 1);
  // An empty block is a block.
  REQUIRE(Ninf_transaction_begin() == 0);
  REQUIRE(Ninf_transaction_end() == 0);
  CHECK(Ninf_transaction_calls() == 0);
}

TEST_CASE("transaction_example_program_verifies", "[e2e][transaction]") {
  // examples/c/transaction_demo.c, as a user runs it.
  E2EDaemon d;
  const std::string command =
      "NINF_SERVER=127.0.0.1:" + std::to_string(d.port()) + " " + TRANSACTION_DEMO + " 120 2>&1";
  FILE *out = ::popen(command.c_str(), "r");
  REQUIRE(out);
  std::string text;
  char buf[512];
  while (std::fgets(buf, sizeof buf, out)) text += buf;
  const int status = ::pclose(out);
  INFO(text);
  CHECK(status == 0);
  CHECK(text.find("VERIFIED") != std::string::npos);
  CHECK(text.find("call 4 ran on 127.0.0.1:" + std::to_string(d.port())) != std::string::npos);
}
