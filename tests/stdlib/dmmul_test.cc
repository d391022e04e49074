// Tests of dmmul (stubs/lib/dmmul.c) against a naive triple loop.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "stubs/lib/ninf_stdlib.h"

namespace {

std::vector<double> RandomMatrix(long n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> m(n * n);
  for (double &v : m) v = dist(gen);
  return m;
}

}  // namespace

TEST_CASE("stdlib_dmmul_matches_naive", "[stdlib][dmmul]") {
  for (long n : {1L, 7L, 64L}) {
    INFO("n = " << n);
    std::vector<double> a = RandomMatrix(n, 1), b = RandomMatrix(n, 2), c(n * n, NAN);
    dmmul(n, a.data(), b.data(), c.data());
    double worst = 0;
    for (long i = 0; i < n; i++) {
      for (long j = 0; j < n; j++) {
        double sum = 0;
        for (long k = 0; k < n; k++) sum += a[i * n + k] * b[k * n + j];
        worst = std::fmax(worst, std::fabs(c[i * n + j] - sum));
      }
    }
    // Entries are sums of n products of magnitude <= 1.
    CHECK(worst <= 1e-13 * n);
  }
}

TEST_CASE("stdlib_dmmul_is_row_major", "[stdlib][dmmul]") {
  // A non-symmetric case whose row-major and column-major answers differ.
  const double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  double c[4];
  dmmul(2, a, b, c);
  CHECK(c[0] == 19);
  CHECK(c[1] == 22);
  CHECK(c[2] == 43);
  CHECK(c[3] == 50);
}

TEST_CASE("stdlib_dmmul_empty_is_noop", "[stdlib][dmmul]") {
  double c = 42;
  dmmul(0, nullptr, nullptr, &c);
  dmmul(-3, nullptr, nullptr, &c);
  CHECK(c == 42);
}
