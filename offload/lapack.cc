// The Fortran entry points (gfortran's ABI: every argument by reference,
// CHARACTER lengths as size_t after the others), each shadowing the
// routine of the same name in the program's LAPACK/BLAS. Each describes
// its call for Run (runtime.h) with the server's IDL argument list
// (stubs/idl/lapack.idl, blas.idl), which is LAPACK's own.
//
// <lapack.h> is included so that the compiler checks every definition
// against LAPACK's own prototype: a definition that differed would be a
// second C function of the same name, an error in C++.
#include <lapack.h>

#include <cstddef>

#include "offload/policy.h"
#include "offload/runtime.h"

namespace ninf::offload {
namespace {

// The bytes of a column-major array of `columns` columns of `ld` doubles,
// as the IDL's a[columns][ld] sizes it (0 for sizes LAPACK would refuse:
// such a call never gets past Ninf_estimate).
std::size_t Bytes(int ld, int columns) {
  if (ld <= 0 || columns <= 0) return 0;
  return sizeof(double) * static_cast<std::size_t>(ld) * static_cast<std::size_t>(columns);
}

// One character as the one-character string an IDL `IN string` takes.
struct Flag {
  explicit Flag(const char *c) : text{*c, '\0'} {}
  char text[2];
};

}  // namespace
}  // namespace ninf::offload

using ninf::offload::Bytes;
using ninf::offload::Call;
using ninf::offload::Flag;
using ninf::offload::Local;
using ninf::offload::Nested;
using ninf::offload::Run;

extern "C" {

void dgesv_(const lapack_int *n, const lapack_int *nrhs, double *a, const lapack_int *lda,
            lapack_int *ipiv, double *b, const lapack_int *ldb, lapack_int *info) {
  using Fn = void(const lapack_int *, const lapack_int *, double *, const lapack_int *,
                  lapack_int *, double *, const lapack_int *, lapack_int *);
  static Fn *const local = Local<Fn>("dgesv_");
  if (Nested()) return local(n, nrhs, a, lda, ipiv, b, ldb, info);
  Call c;
  c.routine = "dgesv";
  c.scalars = {*n, *nrhs, *lda, *ldb};
  c.estimate = [&](Ninf_call_info *i) {
    return Ninf_estimate(i, "dgesv", *n, *nrhs, a, *lda, ipiv, b, *ldb, info);
  };
  c.remote = [&] { return Ninf_call("dgesv", *n, *nrhs, a, *lda, ipiv, b, *ldb, info); };
  c.local = [&] { local(n, nrhs, a, lda, ipiv, b, ldb, info); };
  c.inout = {{a, Bytes(*lda, *n)}, {b, Bytes(*ldb, *nrhs)}};
  c.info = info;
  Run(c);
}

void dgetrf_(const lapack_int *m, const lapack_int *n, double *a, const lapack_int *lda,
             lapack_int *ipiv, lapack_int *info) {
  using Fn = void(const lapack_int *, const lapack_int *, double *, const lapack_int *,
                  lapack_int *, lapack_int *);
  static Fn *const local = Local<Fn>("dgetrf_");
  if (Nested()) return local(m, n, a, lda, ipiv, info);
  Call c;
  c.routine = "dgetrf";
  c.scalars = {*m, *n, *lda};
  c.estimate = [&](Ninf_call_info *i) {
    return Ninf_estimate(i, "dgetrf", *m, *n, a, *lda, ipiv, info);
  };
  c.remote = [&] { return Ninf_call("dgetrf", *m, *n, a, *lda, ipiv, info); };
  c.local = [&] { local(m, n, a, lda, ipiv, info); };
  c.inout = {{a, Bytes(*lda, *n)}};
  c.info = info;
  Run(c);
}

void dgetrs_(const char *trans, const lapack_int *n, const lapack_int *nrhs, const double *a,
             const lapack_int *lda, const lapack_int *ipiv, double *b, const lapack_int *ldb,
             lapack_int *info, size_t /*trans_len*/) {
  // The hidden length is not read: a C caller that declares dgetrs_
  // without it (many do) passes garbage there. LAPACK reads one character.
  using Fn =
      void(const char *, const lapack_int *, const lapack_int *, const double *, const lapack_int *,
           const lapack_int *, double *, const lapack_int *, lapack_int *, size_t);
  static Fn *const local = Local<Fn>("dgetrs_");
  if (Nested()) return local(trans, n, nrhs, a, lda, ipiv, b, ldb, info, 1);
  const Flag t(trans);
  Call c;
  c.routine = "dgetrs";
  c.scalars = {*trans, *n, *nrhs, *lda, *ldb};
  c.estimate = [&](Ninf_call_info *i) {
    return Ninf_estimate(i, "dgetrs", t.text, *n, *nrhs, a, *lda, ipiv, b, *ldb, info);
  };
  c.remote = [&] { return Ninf_call("dgetrs", t.text, *n, *nrhs, a, *lda, ipiv, b, *ldb, info); };
  c.local = [&] { local(trans, n, nrhs, a, lda, ipiv, b, ldb, info, 1); };
  c.inout = {{b, Bytes(*ldb, *nrhs)}};
  c.info = info;
  Run(c);
}

void dposv_(const char *uplo, const lapack_int *n, const lapack_int *nrhs, double *a,
            const lapack_int *lda, double *b, const lapack_int *ldb, lapack_int *info,
            size_t /*uplo_len*/) {
  using Fn = void(const char *, const lapack_int *, const lapack_int *, double *,
                  const lapack_int *, double *, const lapack_int *, lapack_int *, size_t);
  static Fn *const local = Local<Fn>("dposv_");
  if (Nested()) return local(uplo, n, nrhs, a, lda, b, ldb, info, 1);
  const Flag u(uplo);
  Call c;
  c.routine = "dposv";
  c.scalars = {*uplo, *n, *nrhs, *lda, *ldb};
  c.estimate = [&](Ninf_call_info *i) {
    return Ninf_estimate(i, "dposv", u.text, *n, *nrhs, a, *lda, b, *ldb, info);
  };
  c.remote = [&] { return Ninf_call("dposv", u.text, *n, *nrhs, a, *lda, b, *ldb, info); };
  c.local = [&] { local(uplo, n, nrhs, a, lda, b, ldb, info, 1); };
  c.inout = {{a, Bytes(*lda, *n)}, {b, Bytes(*ldb, *nrhs)}};
  c.info = info;
  Run(c);
}

void dsyev_(const char *jobz, const char *uplo, const lapack_int *n, double *a,
            const lapack_int *lda, double *w, double *work, const lapack_int *lwork,
            lapack_int *info, size_t /*jobz_len*/, size_t /*uplo_len*/) {
  using Fn = void(const char *, const char *, const lapack_int *, double *, const lapack_int *,
                  double *, double *, const lapack_int *, lapack_int *, size_t, size_t);
  static Fn *const local = Local<Fn>("dsyev_");
  if (Nested()) return local(jobz, uplo, n, a, lda, w, work, lwork, info, 1, 1);
  const Flag j(jobz), u(uplo);
  Call c;
  c.routine = "dsyev";
  c.scalars = {*jobz, *uplo, *n, *lda, *lwork};
  // The optimal lwork comes back in work[0], which a remote call never
  // returns (a WORK array stays on the server): only the local routine can
  // answer, and answers with what the program's own LAPACK wants.
  c.workspace_query = *lwork == -1;
  c.estimate = [&](Ninf_call_info *i) {
    return Ninf_estimate(i, "dsyev", j.text, u.text, *n, a, *lda, w, work, *lwork, info);
  };
  c.remote = [&] { return Ninf_call("dsyev", j.text, u.text, *n, a, *lda, w, work, *lwork, info); };
  c.local = [&] { local(jobz, uplo, n, a, lda, w, work, lwork, info, 1, 1); };
  c.inout = {{a, Bytes(*lda, *n)}};
  c.info = info;
  Run(c);
}

void dgemm_(const char *transa, const char *transb, const lapack_int *m, const lapack_int *n,
            const lapack_int *k, const double *alpha, const double *a, const lapack_int *lda,
            const double *b, const lapack_int *ldb, const double *beta, double *c,
            const lapack_int *ldc, size_t /*transa_len*/, size_t /*transb_len*/) {
  using Fn =
      void(const char *, const char *, const lapack_int *, const lapack_int *, const lapack_int *,
           const double *, const double *, const lapack_int *, const double *, const lapack_int *,
           const double *, double *, const lapack_int *, size_t, size_t);
  static Fn *const local = Local<Fn>("dgemm_");
  auto run_local = [&] {
    local(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 1, 1);
  };
  if (Nested()) return run_local();
  // IN char on the server (blas.idl): a character, promoted to int as C's
  // varargs promote it.
  const int ta = *transa, tb = *transb;
  Call call;
  call.routine = "dgemm";
  call.scalars = {ta, tb, *m, *n, *k, *lda, *ldb, *ldc};
  call.estimate = [&](Ninf_call_info *i) {
    return Ninf_estimate(i, "dgemm", ta, tb, *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc);
  };
  call.remote = [&] {
    return Ninf_call("dgemm", ta, tb, *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc);
  };
  call.local = run_local;
  call.inout = {{c, Bytes(*ldc, *n)}};
  if (!ninf::offload::DgemmLegal(*transa, *transb, *m, *n, *k, *lda, *ldb, *ldc))
    call.local_only = "illegal arguments: the local BLAS reports them";
  Run(call);
}

}  // extern "C"
