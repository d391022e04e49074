// Tests of the NAS EP kernel (stubs/lib/ep.c): the official verification
// sums, and the fast lane-parallel generator against a plain transcription
// of the NAS randlc/vranlc loop for runs small enough to repeat here.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "stubs/lib/ninf_stdlib.h"

namespace {

// NAS randlc: x <- a * x mod 2^46 with 23-bit halves; returns x * 2^-46.
double Randlc(double *x, double a) {
  const double r23 = std::ldexp(1.0, -23), t23 = std::ldexp(1.0, 23);
  const double r46 = r23 * r23, t46 = t23 * t23;
  double a1 = static_cast<int>(r23 * a), a2 = a - t23 * a1;
  double x1 = static_cast<int>(r23 * *x), x2 = *x - t23 * x1;
  double t1 = a1 * x2 + a2 * x1;
  double t2 = static_cast<int>(r23 * t1);
  double z = t1 - t23 * t2;
  double t3 = t23 * z + a2 * x2;
  double t4 = static_cast<int>(r46 * t3);
  *x = t3 - t46 * t4;
  return r46 * *x;
}

struct Reference {
  double sx = 0, sy = 0;
  double q[10] = {};
  uint64_t accepted = 0;
};

// The NAS EP loop, one number at a time. For m < 16 it is one short batch
// (the first 2^m pairs of the stream), as ep() defines it.
Reference ReferenceEp(int m) {
  const double a = 1220703125.0, s = 271828183.0;
  int batch_log2 = m < 16 ? m : 16;
  uint64_t batches = uint64_t{1} << (m - batch_log2);
  uint64_t numbers = uint64_t{2} << batch_log2;
  double an = a;  // a^(numbers per batch), by repeated squaring as NAS does
  for (uint64_t p = 1; p < numbers; p *= 2) Randlc(&an, an);
  Reference ref;
  std::vector<double> u(numbers);
  for (uint64_t k = 0; k < batches; k++) {
    double t1 = s, t2 = an;
    for (uint64_t kk = k; kk != 0; kk /= 2) {  // t1 = s * an^k
      if (kk & 1) Randlc(&t1, t2);
      Randlc(&t2, t2);
    }
    for (auto &v : u) v = Randlc(&t1, a);
    for (uint64_t i = 0; i < numbers / 2; i++) {
      double x1 = 2 * u[2 * i] - 1, x2 = 2 * u[2 * i + 1] - 1;
      double r = x1 * x1 + x2 * x2;
      if (r > 1) continue;
      double f = std::sqrt(-2 * std::log(r) / r);
      double gx = x1 * f, gy = x2 * f;
      ref.q[static_cast<int>(std::fmax(std::fabs(gx), std::fabs(gy)))] += 1;
      ref.sx += gx;
      ref.sy += gy;
      ref.accepted++;
    }
  }
  return ref;
}

double Sum(const double q[10]) {
  double total = 0;
  for (int l = 0; l < 10; l++) total += q[l];
  return total;
}

}  // namespace

TEST_CASE("stdlib_ep_class_s_verifies", "[stdlib][ep]") {
  double sx, sy, q[10];
  ep(24, &sx, &sy, q);
  CHECK(ep_verify(24, sx, sy) == 1);
  CHECK(std::fabs((sx - -3.247834652034740e+3) / 3.247834652034740e+3) <= 1e-8);
  CHECK(std::fabs((sy - -6.958407078382297e+3) / 6.958407078382297e+3) <= 1e-8);
  // The published class S counts; they add up to the accepted pairs.
  const double expected[10] = {6140517, 5865300, 1100361, 68546, 1648, 17, 0, 0, 0, 0};
  for (int l = 0; l < 10; l++) CHECK(q[l] == expected[l]);
  CHECK(Sum(q) == 13176389);
  // About pi/4 of the 2^24 pairs fall inside the unit circle.
  CHECK(std::fabs(Sum(q) / 16777216.0 - M_PI / 4) < 1e-3);
}

TEST_CASE("stdlib_ep_class_w_verifies", "[stdlib][ep]") {
  double sx, sy, q[10];
  ep(25, &sx, &sy, q);
  CHECK(ep_verify(25, sx, sy) == 1);
  CHECK(Sum(q) == 26354769);
}

TEST_CASE("stdlib_ep_matches_plain_nas_loop", "[stdlib][ep]") {
  // Small runs (one short batch, several lanes' worth, exactly one batch,
  // and several batches) must match the plain loop: counts exactly, sums up
  // to rounding from the different summation order.
  for (int m : {0, 1, 2, 3, 5, 10, 16, 17, 18}) {
    INFO("m = " << m);
    Reference ref = ReferenceEp(m);
    double sx, sy, q[10];
    ep(m, &sx, &sy, q);
    for (int l = 0; l < 10; l++) CHECK(q[l] == ref.q[l]);
    CHECK(Sum(q) == static_cast<double>(ref.accepted));
    CHECK(sx == Approx(ref.sx).epsilon(1e-12).margin(1e-10));
    CHECK(sy == Approx(ref.sy).epsilon(1e-12).margin(1e-10));
  }
}

TEST_CASE("stdlib_ep_rejects_bad_m", "[stdlib][ep]") {
  for (long m : {-1L, 51L, 1000L}) {
    double sx = 0, sy = 0, q[10];
    for (double &v : q) v = 7;
    ep(m, &sx, &sy, q);
    CHECK(std::isnan(sx));
    CHECK(std::isnan(sy));
    CHECK(Sum(q) == 0);
  }
}

TEST_CASE("stdlib_ep_verify_answers", "[stdlib][ep]") {
  CHECK(ep_verify(24, -3.247834652034740e+3, -6.958407078382297e+3) == 1);
  CHECK(ep_verify(28, -4.295875165629892e+3, -1.580732573678431e+4) == 1);
  // Off by 1e-7 relative: fails the 1e-8 tolerance.
  CHECK(ep_verify(24, -3.247834652034740e+3 * (1 + 1e-7), -6.958407078382297e+3) == 0);
  CHECK(ep_verify(25, -3.247834652034740e+3, -6.958407078382297e+3) == 0);
  CHECK(ep_verify(24, NAN, -6.958407078382297e+3) == 0);
  CHECK(ep_verify(20, 0, 0) == -1);
}
