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
#include <cstring>
#include <vector>

#include "offload/policy.h"
#include "offload/runtime.h"

namespace ninf::offload {
namespace {

// The bytes of a column-major array of `columns` columns of `ld` doubles,
// as the IDL's a[columns][ld] sizes it (0 for sizes LAPACK would refuse:
// such a call never gets past Ninf_estimate).
std::size_t Bytes(lapack_int ld, lapack_int columns) {
  if (ld <= 0 || columns <= 0) return 0;
  return sizeof(double) * static_cast<std::size_t>(ld) * static_cast<std::size_t>(columns);
}

// The bytes of `count` elements of type T (0 for a count LAPACK would refuse).
template <typename T>
std::size_t Elements(lapack_int count) {
  return count > 0 ? sizeof(T) * static_cast<std::size_t>(count) : 0;
}

lapack_int Min(lapack_int a, lapack_int b) { return a < b ? a : b; }

// A column-major rows x cols block with leading dimension ld, as the server
// gets it. LAPACK and BLAS touch only rows 0..rows-1 of each column, so a
// legal caller's array may end right after the last column's rows (a
// trailing sub-block), and rows rows..ld-1 may belong to others (a tile of a
// bigger matrix another thread works on). With ld > rows the block is sent
// as a packed copy (leading dimension rows) and the result written back
// into the caller's rows only when the call succeeded; with ld == rows (or
// an illegal ld < rows, which the server's LAPACK reports) the caller's
// array goes as it is.
struct Block {
  const double *caller;
  lapack_int rows, cols, ld;

  bool Packed() const { return rows >= 1 && cols >= 1 && ld > rows; }
  lapack_int SentLd() const { return Packed() ? rows : ld; }
  // The caller's memory a remote call writes directly (backed up by Run).
  std::size_t CallerBytes() const { return Packed() ? 0 : Bytes(ld, cols); }
  // The copy to send (empty when the caller's array goes as it is).
  std::vector<double> Pack() const {
    std::vector<double> v;
    if (!Packed()) return v;
    v.resize(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
    for (lapack_int j = 0; j < cols; ++j)
      std::memcpy(&v[static_cast<std::size_t>(j) * rows],
                  caller + static_cast<std::size_t>(j) * static_cast<std::size_t>(ld),
                  sizeof(double) * static_cast<std::size_t>(rows));
    return v;
  }
  double *Sent(std::vector<double> &copy) const {
    return Packed() ? copy.data() : const_cast<double *>(caller);
  }
  // The packed result into the caller's rows (nothing when not packed).
  void Unpack(const std::vector<double> &copy, double *into) const {
    if (!Packed()) return;
    for (lapack_int j = 0; j < cols; ++j)
      std::memcpy(into + static_cast<std::size_t>(j) * static_cast<std::size_t>(ld),
                  &copy[static_cast<std::size_t>(j) * rows],
                  sizeof(double) * static_cast<std::size_t>(rows));
  }
};

// One character as the one-character string an IDL `IN string` takes.
struct Flag {
  explicit Flag(const char *c) : text{*c, '\0'} {}
  char text[2];
};

bool NoTrans(char c) { return c == 'N' || c == 'n'; }

}  // namespace
}  // namespace ninf::offload

using ninf::offload::Block;
using ninf::offload::Call;
using ninf::offload::Elements;
using ninf::offload::Flag;
using ninf::offload::Local;
using ninf::offload::LocalScope;
using ninf::offload::Min;
using ninf::offload::Nested;
using ninf::offload::NoTrans;
using ninf::offload::Run;

extern "C" {

void dgesv_(const lapack_int *n, const lapack_int *nrhs, double *a, const lapack_int *lda,
            lapack_int *ipiv, double *b, const lapack_int *ldb, lapack_int *info) {
  using Fn = void(const lapack_int *, const lapack_int *, double *, const lapack_int *,
                  lapack_int *, double *, const lapack_int *, lapack_int *);
  static Fn *const local = Local<Fn>("dgesv_");
  if (Nested()) return local(n, nrhs, a, lda, ipiv, b, ldb, info);
  const Block ba{a, *n, *n, *lda}, bb{b, *n, *nrhs, *ldb};
  Call c;
  c.routine = "dgesv";
  c.flops = ninf::offload::DgesvFlops(*n, *nrhs);
  c.scalars = {*n, *nrhs, *lda, *ldb};
  c.estimate = [&](Ninf_call_info *i) {
    return Ninf_estimate(i, "dgesv", *n, *nrhs, a, ba.SentLd(), ipiv, b, bb.SentLd(), info);
  };
  c.remote = [&] {
    std::vector<double> pa = ba.Pack(), pb = bb.Pack();
    const int rc = Ninf_call("dgesv", *n, *nrhs, ba.Sent(pa), ba.SentLd(), ipiv, bb.Sent(pb),
                             bb.SentLd(), info);
    if (rc == 0 && *info >= 0) ba.Unpack(pa, a), bb.Unpack(pb, b);
    return rc;
  };
  c.local = [&] { local(n, nrhs, a, lda, ipiv, b, ldb, info); };
  c.inout = {{a, ba.CallerBytes()}, {b, bb.CallerBytes()}, {ipiv, Elements<lapack_int>(*n)}};
  c.info = info;
  Run(c);
}

void dgetrf_(const lapack_int *m, const lapack_int *n, double *a, const lapack_int *lda,
             lapack_int *ipiv, lapack_int *info) {
  using Fn = void(const lapack_int *, const lapack_int *, double *, const lapack_int *,
                  lapack_int *, lapack_int *);
  static Fn *const local = Local<Fn>("dgetrf_");
  if (Nested()) return local(m, n, a, lda, ipiv, info);
  const Block ba{a, *m, *n, *lda};
  Call c;
  c.routine = "dgetrf";
  c.flops = ninf::offload::DgetrfFlops(*m, *n);
  c.scalars = {*m, *n, *lda};
  c.estimate = [&](Ninf_call_info *i) {
    return Ninf_estimate(i, "dgetrf", *m, *n, a, ba.SentLd(), ipiv, info);
  };
  c.remote = [&] {
    std::vector<double> pa = ba.Pack();
    const int rc = Ninf_call("dgetrf", *m, *n, ba.Sent(pa), ba.SentLd(), ipiv, info);
    if (rc == 0 && *info >= 0) ba.Unpack(pa, a);
    return rc;
  };
  c.local = [&] { local(m, n, a, lda, ipiv, info); };
  c.inout = {{a, ba.CallerBytes()}, {ipiv, Elements<lapack_int>(Min(*m, *n))}};
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
  const Block ba{a, *n, *n, *lda}, bb{b, *n, *nrhs, *ldb};
  Call c;
  c.routine = "dgetrs";
  c.flops = ninf::offload::DgetrsFlops(*n, *nrhs);
  c.scalars = {*trans, *n, *nrhs, *lda, *ldb};
  c.estimate = [&](Ninf_call_info *i) {
    return Ninf_estimate(i, "dgetrs", t.text, *n, *nrhs, a, ba.SentLd(), ipiv, b, bb.SentLd(),
                         info);
  };
  c.remote = [&] {
    std::vector<double> pa = ba.Pack(), pb = bb.Pack();
    const int rc = Ninf_call("dgetrs", t.text, *n, *nrhs, ba.Sent(pa), ba.SentLd(), ipiv,
                             bb.Sent(pb), bb.SentLd(), info);
    if (rc == 0 && *info >= 0) bb.Unpack(pb, b);
    return rc;
  };
  c.local = [&] { local(trans, n, nrhs, a, lda, ipiv, b, ldb, info, 1); };
  c.inout = {{b, bb.CallerBytes()}};
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
  const Block ba{a, *n, *n, *lda}, bb{b, *n, *nrhs, *ldb};
  Call c;
  c.routine = "dposv";
  c.flops = ninf::offload::DposvFlops(*n, *nrhs);
  c.scalars = {*uplo, *n, *nrhs, *lda, *ldb};
  c.estimate = [&](Ninf_call_info *i) {
    return Ninf_estimate(i, "dposv", u.text, *n, *nrhs, a, ba.SentLd(), b, bb.SentLd(), info);
  };
  c.remote = [&] {
    std::vector<double> pa = ba.Pack(), pb = bb.Pack();
    const int rc = Ninf_call("dposv", u.text, *n, *nrhs, ba.Sent(pa), ba.SentLd(), bb.Sent(pb),
                             bb.SentLd(), info);
    if (rc == 0 && *info >= 0) ba.Unpack(pa, a), bb.Unpack(pb, b);
    return rc;
  };
  c.local = [&] { local(uplo, n, nrhs, a, lda, b, ldb, info, 1); };
  c.inout = {{a, ba.CallerBytes()}, {b, bb.CallerBytes()}};
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
  const Block ba{a, *n, *n, *lda};
  Call c;
  c.routine = "dsyev";
  c.flops = ninf::offload::DsyevFlops(*n);
  c.scalars = {*jobz, *uplo, *n, *lda, *lwork};
  // The optimal lwork comes back in work[0], which a remote call never
  // returns (a WORK array stays on the server): only the local routine can
  // answer, and answers with what the program's own LAPACK wants.
  c.workspace_query = *lwork == -1;
  c.estimate = [&](Ninf_call_info *i) {
    return Ninf_estimate(i, "dsyev", j.text, u.text, *n, a, ba.SentLd(), w, work, *lwork, info);
  };
  c.remote = [&] {
    std::vector<double> pa = ba.Pack();
    const int rc =
        Ninf_call("dsyev", j.text, u.text, *n, ba.Sent(pa), ba.SentLd(), w, work, *lwork, info);
    if (rc != 0 || *info < 0) return rc;
    ba.Unpack(pa, a);
    // LAPACK's dsyev leaves the optimal lwork in work[0]; the server's work
    // array stays there, so the local routine's query answers (it reads
    // only the flags, n and lda).
    double optimal = 0;
    const lapack_int query = -1;
    lapack_int query_info = 0;
    {
      LocalScope scope;
      local(jobz, uplo, n, a, lda, w, &optimal, &query, &query_info, 1, 1);
    }
    if (query_info == 0 && *lwork >= 1) work[0] = optimal;
    return rc;
  };
  c.local = [&] { local(jobz, uplo, n, a, lda, w, work, lwork, info, 1, 1); };
  c.inout = {{a, ba.CallerBytes()}, {w, Elements<double>(*n)}};
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
  const Block ba{a, NoTrans(*transa) ? *m : *k, NoTrans(*transa) ? *k : *m, *lda};
  const Block bb{b, NoTrans(*transb) ? *k : *n, NoTrans(*transb) ? *n : *k, *ldb};
  const Block bc{c, *m, *n, *ldc};
  Call call;
  call.routine = "dgemm";
  call.flops = ninf::offload::DgemmFlops(*m, *n, *k);
  call.scalars = {ta, tb, *m, *n, *k, *lda, *ldb, *ldc};
  call.estimate = [&](Ninf_call_info *i) {
    return Ninf_estimate(i, "dgemm", ta, tb, *m, *n, *k, *alpha, a, ba.SentLd(), b, bb.SentLd(),
                         *beta, c, bc.SentLd());
  };
  call.remote = [&] {
    std::vector<double> pa = ba.Pack(), pb = bb.Pack(), pc = bc.Pack();
    const int rc = Ninf_call("dgemm", ta, tb, *m, *n, *k, *alpha, ba.Sent(pa), ba.SentLd(),
                             bb.Sent(pb), bb.SentLd(), *beta, bc.Sent(pc), bc.SentLd());
    if (rc == 0) bc.Unpack(pc, c);
    return rc;
  };
  call.local = run_local;
  call.inout = {{c, bc.CallerBytes()}};
  if (!ninf::offload::DgemmLegal(*transa, *transb, *m, *n, *k, *lda, *ldb, *ldc))
    call.local_only = "illegal arguments: the local BLAS reports them";
  Run(call);
}

}  // extern "C"
