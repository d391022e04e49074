// Tests of the benchmark helpers (stubs/lib/bench_helpers.c): each keeps the
// data contract its IDL Define states.
#include <catch2/catch.hpp>
#include <vector>

#include "stubs/lib/ninf_stdlib.h"

TEST_CASE("stdlib_null_returns", "[stdlib][bench]") {
  ninf_null();
  SUCCEED();
}

TEST_CASE("stdlib_echo_leaves_array_unchanged", "[stdlib][bench]") {
  std::vector<double> a = {3.5, -1.0, 1e300, 0.0};
  std::vector<double> before = a;
  echo(static_cast<long>(a.size()), a.data());
  CHECK(a == before);
}

TEST_CASE("stdlib_sink_does_not_write", "[stdlib][bench]") {
  const std::vector<double> a = {1, 2, 3};
  std::vector<double> copy = a;
  sink(static_cast<long>(a.size()), a.data());
  CHECK(a == copy);
}

TEST_CASE("stdlib_source_fills_index", "[stdlib][bench]") {
  std::vector<double> a(1000, -1.0);
  source(static_cast<long>(a.size()), a.data());
  for (size_t i = 0; i < a.size(); i++) REQUIRE(a[i] == static_cast<double>(i));
  double untouched = -1;
  source(0, &untouched);
  CHECK(untouched == -1);
}
