// Ninf_estimate (client/ninf.h), which libninf_offload decides with,
// against a real ninfd serving the standard library: the CalcOrder and the
// bytes of the new LAPACK/BLAS functions' IDL (stubs/idl/lapack.idl,
// blas.idl) on given arguments, nothing run on the server, the interface
// cached after the first estimate, and the errors.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "client/ninf.h"
#include "offload/policy.h"
#include "tests/e2e/e2e_fixture.h"

using ninf::offload::DgemmFlops;
using ninf::offload::DgesvFlops;
using ninf::offload::DgetrfFlops;
using ninf::offload::DgetrsFlops;
using ninf::offload::DposvFlops;
using ninf::offload::DsyevFlops;

namespace {

bool Names(const Ninf_call_info &info, int port) {
  return std::string(info.server).find(":" + std::to_string(port)) != std::string::npos;
}

}  // namespace

TEST_CASE("offload_estimate_dgesv_runs_nothing", "[offload]") {
  E2EDaemon d;
  const int n = 50, nrhs = 3, lda = 52, ldb = 51;
  std::vector<double> a(static_cast<std::size_t>(lda) * n, 1.5), b(ldb * nrhs, 2.5);
  const std::vector<double> a0 = a, b0 = b;
  std::vector<int> ipiv(n, -7);
  int info = -9;
  Ninf_call_info est{};
  REQUIRE(Ninf_estimate(&est, d.Name("dgesv").c_str(), n, nrhs, a.data(), lda, ipiv.data(),
                        b.data(), ldb, &info) == 0);
  // CalcOrder 2*n^3/3 + 2*n^2*nrhs, in the IDL's integer arithmetic.
  CHECK(est.work_flops == 2 * n * n * n / 3 + 2 * n * n * nrhs);
  CHECK(est.work_flops == DgesvFlops(n, nrhs));
  CHECK(est.send_bytes == 8ull * (n * lda + nrhs * ldb));
  CHECK(est.recv_bytes == 8ull * (n * lda + nrhs * ldb) + 4ull * n + 4);
  CHECK(Names(est, d.port()));
  CHECK(est.total_seconds == 0);
  // Nothing ran and nothing was written.
  CHECK(d.Stat("completed") == 0);
  CHECK(a == a0);
  CHECK(b == b0);
  CHECK(ipiv == std::vector<int>(n, -7));
  CHECK(info == -9);

  // A real call of the same arguments reports the same CalcOrder.
  REQUIRE(Ninf_call(d.Name("dgesv").c_str(), n, nrhs, a.data(), lda, ipiv.data(), b.data(), ldb,
                    &info) == 0);
  Ninf_call_info done{};
  REQUIRE(Ninf_get_call_info(&done) == 0);
  CHECK(done.work_flops == est.work_flops);
  CHECK(d.WaitForStat("completed", 1) == 1);
}

TEST_CASE("offload_estimate_takes_the_cached_interface", "[offload]") {
  E2EDaemon d;
  const int n = 20;
  std::vector<double> a(n * n), b(n);
  std::vector<int> ipiv(n);
  int info = 0;
  Ninf_call_info est{};
  REQUIRE(Ninf_estimate(&est, d.Name("dgesv").c_str(), n, 1, a.data(), n, ipiv.data(), b.data(), n,
                        &info) == 0);
  const long accepted = d.Stat("connections_accepted");
  // The interface is cached: more estimates open no connection.
  for (int i = 0; i < 5; ++i)
    REQUIRE(Ninf_estimate(&est, d.Name("dgesv").c_str(), n, 1, a.data(), n, ipiv.data(), b.data(),
                          n, &info) == 0);
  // (the Stat request itself is one connection)
  CHECK(d.Stat("connections_accepted") == accepted + 1);
}

TEST_CASE("offload_estimate_lapack_idl_sizes", "[offload]") {
  E2EDaemon d;
  std::vector<double> big(10000, 0.0), w(100);
  std::vector<int> ipiv(100);
  int info = 0;
  Ninf_call_info est{};

  SECTION("dgetrf: ipiv has min(m, n) elements") {
    const int m = 7, n = 5, lda = 7;
    REQUIRE(Ninf_estimate(&est, d.Name("dgetrf").c_str(), m, n, big.data(), lda, ipiv.data(),
                          &info) == 0);
    CHECK(est.send_bytes == 8ull * n * lda);
    CHECK(est.recv_bytes == 8ull * n * lda + 4ull * 5 + 4);
    // 2mnk - (m+n)k^2 + 2k^3/3 with k = 5: 350 - 300 + 83.
    CHECK(est.work_flops == 2 * 7 * 5 * 5 - 12 * 25 + 250 / 3);
    CHECK(est.work_flops == DgetrfFlops(m, n));  // the offload runtime's own count
  }
  SECTION("dgetrs: only b comes back") {
    const int n = 6, nrhs = 2;
    REQUIRE(Ninf_estimate(&est, d.Name("dgetrs").c_str(), "N", n, nrhs, big.data(), n, ipiv.data(),
                          big.data(), n, &info) == 0);
    CHECK(est.send_bytes == 8ull * n * n + 4ull * n + 8ull * n * nrhs);
    CHECK(est.recv_bytes == 8ull * n * nrhs + 4);
    CHECK(est.work_flops == 2 * n * n * nrhs);
    CHECK(est.work_flops == DgetrsFlops(n, nrhs));
  }
  SECTION("dposv") {
    const int n = 9, nrhs = 1;
    REQUIRE(Ninf_estimate(&est, d.Name("dposv").c_str(), "U", n, nrhs, big.data(), n, big.data(), n,
                          &info) == 0);
    CHECK(est.send_bytes == 8ull * (n * n + n * nrhs));
    CHECK(est.work_flops == 729 / 3 + 2 * 81 * 1);
    CHECK(est.work_flops == DposvFlops(n, nrhs));
  }
  SECTION("dsyev: the WORK array never travels") {
    const int n = 10, lwork = 100;
    REQUIRE(Ninf_estimate(&est, d.Name("dsyev").c_str(), "V", "U", n, big.data(), n, w.data(),
                          big.data(), lwork, &info) == 0);
    CHECK(est.send_bytes == 8ull * n * n);
    CHECK(est.recv_bytes == 8ull * n * n + 8ull * n + 4);
    CHECK(est.work_flops == 4 * 1000 / 3);
    CHECK(est.work_flops == DsyevFlops(n));
  }
  SECTION("dgemm: A's columns follow transa") {
    const int m = 4, n = 5, k = 6, lda = 7, ldb = 6, ldc = 4;
    REQUIRE(Ninf_estimate(&est, d.Name("dgemm").c_str(), 'N', 'N', m, n, k, 1.0, big.data(), lda,
                          big.data(), ldb, 0.0, big.data(), ldc) == 0);
    CHECK(est.send_bytes == 8ull * (k * lda + n * ldb + n * ldc));
    CHECK(est.recv_bytes == 8ull * n * ldc);
    CHECK(est.work_flops == 2 * m * n * k);
    CHECK(est.work_flops == DgemmFlops(m, n, k));
    // Transposed: A is lda x m, B is ldb x k.
    REQUIRE(Ninf_estimate(&est, d.Name("dgemm").c_str(), 'T', 't', m, n, k, 1.0, big.data(), lda,
                          big.data(), ldb, 0.0, big.data(), ldc) == 0);
    CHECK(est.send_bytes == 8ull * (m * lda + k * ldb + n * ldc));
  }
  CHECK(d.Stat("completed") == 0);
}

TEST_CASE("offload_estimate_errors", "[offload]") {
  E2EDaemon d;
  std::vector<double> a(16);
  std::vector<int> ipiv(4);
  int info = 0;
  Ninf_call_info est{};
  CHECK(Ninf_estimate(nullptr, d.Name("dgesv").c_str(), 4, 1, a.data(), 4, ipiv.data(), a.data(), 4,
                      &info) == -1);
  CHECK(Ninf_get_error() == NINF_ERR_INVALID_ARGUMENT);
  CHECK(Ninf_estimate(&est, d.Name("no_such_function").c_str(), 4) == -1);
  CHECK(Ninf_get_error() == NINF_ERR_FUNCTION_NOT_FOUND);
  // A negative order: the sizes are refused before anything could move.
  CHECK(Ninf_estimate(&est, d.Name("dgesv").c_str(), -4, 1, a.data(), 4, ipiv.data(), a.data(), 4,
                      &info) == -1);
  CHECK(Ninf_get_error() == NINF_ERR_ARGUMENT_MISMATCH);
  CHECK(d.Stat("completed") == 0);
  CHECK(d.ZombieChildren() == 0);
}
