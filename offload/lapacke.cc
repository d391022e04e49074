// The LAPACKE entry points (C, row- or column-major). A legal call is
// brought to column-major as LAPACKE itself does it (a transposed copy with
// leading dimension max(1, rows), transposed back afterwards) and goes
// through the Fortran entry point of lapack.cc, which decides where it
// runs; the bits are those of LAPACKE calling the same routine. A call that
// LAPACKE would refuse (a bad layout or flag, a short leading dimension, a
// NaN in its input) is handed to the program's own LAPACKE, under
// LocalScope, so the caller gets its exact return value and message.
//
// <lapacke.h> is included so that every definition is checked against
// LAPACKE's prototype.
#include <lapacke.h>

#include <cmath>
#include <new>
#include <vector>

#include "offload/runtime.h"

namespace ninf::offload {
namespace {

lapack_int Max1(lapack_int v) { return v > 1 ? v : 1; }

bool RowMajor(int layout) { return layout == LAPACK_ROW_MAJOR; }
bool KnownLayout(int layout) { return layout == LAPACK_ROW_MAJOR || layout == LAPACK_COL_MAJOR; }

// Offsets in 64 bits: i * ld overflows an int from n ~ 46341 on.
std::size_t Offset(lapack_int major, lapack_int ld, lapack_int minor) {
  return static_cast<std::size_t>(major) * static_cast<std::size_t>(ld) +
         static_cast<std::size_t>(minor);
}

// Element (i, j) of a rows x cols matrix stored in `layout` with `ld`.
double At(int layout, const double *a, lapack_int ld, lapack_int i, lapack_int j) {
  return RowMajor(layout) ? a[Offset(i, ld, j)] : a[Offset(j, ld, i)];
}

bool AnyNaN(int layout, const double *a, lapack_int rows, lapack_int cols, lapack_int ld) {
  for (lapack_int i = 0; i < rows; ++i)
    for (lapack_int j = 0; j < cols; ++j)
      if (std::isnan(At(layout, a, ld, i, j))) return true;
  return false;
}

// LAPACKE checks only the triangle a symmetric routine reads.
bool AnyNaNTriangle(int layout, char uplo, const double *a, lapack_int n, lapack_int ld) {
  const bool upper = uplo == 'U' || uplo == 'u';
  for (lapack_int i = 0; i < n; ++i)
    for (lapack_int j = upper ? i : 0; j < (upper ? n : i + 1); ++j)
      if (std::isnan(At(layout, a, ld, i, j))) return true;
  return false;
}

bool IsUplo(char c) { return c == 'U' || c == 'u' || c == 'L' || c == 'l'; }
bool IsJobz(char c) { return c == 'N' || c == 'n' || c == 'V' || c == 'v'; }
bool IsTrans(char c) {
  return c == 'N' || c == 'n' || c == 'T' || c == 't' || c == 'C' || c == 'c';
}

// A row-major rows x cols matrix as a column-major copy (leading dimension
// max(1, rows)), and back.
std::vector<double> ToColumnMajor(const double *a, lapack_int rows, lapack_int cols,
                                  lapack_int ld) {
  const lapack_int ldt = Max1(rows);
  std::vector<double> t(static_cast<std::size_t>(ldt) * static_cast<std::size_t>(Max1(cols)));
  for (lapack_int i = 0; i < rows; ++i)
    for (lapack_int j = 0; j < cols; ++j) t[Offset(j, ldt, i)] = a[Offset(i, ld, j)];
  return t;
}

void FromColumnMajor(const std::vector<double> &t, lapack_int rows, lapack_int cols, double *a,
                     lapack_int ld) {
  const lapack_int ldt = Max1(rows);
  for (lapack_int i = 0; i < rows; ++i)
    for (lapack_int j = 0; j < cols; ++j) a[Offset(i, ld, j)] = t[Offset(j, ldt, i)];
}

// The program's own LAPACKE_<routine>, run for a call it must answer
// itself; `why` goes in the log line.
template <typename Fn, typename... Args>
lapack_int Delegate(const char *symbol, const char *routine, const char *why, Args... args) {
  Fn *real = Local<Fn>(symbol);
  lapack_int result = 0;
  Call c;
  c.routine = routine;
  c.local_only = why;
  c.local = [&] { result = real(args...); };
  Run(c);
  return result;
}

constexpr const char *kRefused =
    "arguments LAPACKE refuses (layout, flag, leading dimension or NaN): its own answer";

}  // namespace
}  // namespace ninf::offload

using namespace ninf::offload;  // NOLINT: the file's only purpose is these definitions

extern "C" {

lapack_int LAPACKE_dgesv(int layout, lapack_int n, lapack_int nrhs, double *a, lapack_int lda,
                         lapack_int *ipiv, double *b, lapack_int ldb) {
  using Real = lapack_int(int, lapack_int, lapack_int, double *, lapack_int, lapack_int *, double *,
                          lapack_int);
  const bool legal = !Nested() && KnownLayout(layout) && n >= 0 && nrhs >= 0 && lda >= Max1(n) &&
                     ldb >= (RowMajor(layout) ? Max1(nrhs) : Max1(n)) &&
                     !AnyNaN(layout, a, n, n, lda) && !AnyNaN(layout, b, n, nrhs, ldb);
  if (!legal)
    return Delegate<Real>("LAPACKE_dgesv", "dgesv", kRefused, layout, n, nrhs, a, lda, ipiv, b,
                          ldb);
  lapack_int info = 0;
  if (!RowMajor(layout)) {
    dgesv_(&n, &nrhs, a, &lda, ipiv, b, &ldb, &info);
    return info;
  }
  try {
    std::vector<double> at = ToColumnMajor(a, n, n, lda);
    std::vector<double> bt = ToColumnMajor(b, n, nrhs, ldb);
    const lapack_int ldt = Max1(n);
    dgesv_(&n, &nrhs, at.data(), &ldt, ipiv, bt.data(), &ldt, &info);
    FromColumnMajor(at, n, n, a, lda);
    FromColumnMajor(bt, n, nrhs, b, ldb);
  } catch (const std::bad_alloc &) {
    return LAPACK_TRANSPOSE_MEMORY_ERROR;
  }
  return info;
}

lapack_int LAPACKE_dgetrf(int layout, lapack_int m, lapack_int n, double *a, lapack_int lda,
                          lapack_int *ipiv) {
  using Real = lapack_int(int, lapack_int, lapack_int, double *, lapack_int, lapack_int *);
  const bool legal = !Nested() && KnownLayout(layout) && m >= 0 && n >= 0 &&
                     lda >= (RowMajor(layout) ? Max1(n) : Max1(m)) && !AnyNaN(layout, a, m, n, lda);
  if (!legal)
    return Delegate<Real>("LAPACKE_dgetrf", "dgetrf", kRefused, layout, m, n, a, lda, ipiv);
  lapack_int info = 0;
  if (!RowMajor(layout)) {
    dgetrf_(&m, &n, a, &lda, ipiv, &info);
    return info;
  }
  try {
    std::vector<double> at = ToColumnMajor(a, m, n, lda);
    const lapack_int ldt = Max1(m);
    dgetrf_(&m, &n, at.data(), &ldt, ipiv, &info);
    FromColumnMajor(at, m, n, a, lda);
  } catch (const std::bad_alloc &) {
    return LAPACK_TRANSPOSE_MEMORY_ERROR;
  }
  return info;
}

lapack_int LAPACKE_dgetrs(int layout, char trans, lapack_int n, lapack_int nrhs, const double *a,
                          lapack_int lda, const lapack_int *ipiv, double *b, lapack_int ldb) {
  using Real = lapack_int(int, char, lapack_int, lapack_int, const double *, lapack_int,
                          const lapack_int *, double *, lapack_int);
  const bool legal = !Nested() && KnownLayout(layout) && IsTrans(trans) && n >= 0 && nrhs >= 0 &&
                     lda >= Max1(n) && ldb >= (RowMajor(layout) ? Max1(nrhs) : Max1(n)) &&
                     !AnyNaN(layout, a, n, n, lda) && !AnyNaN(layout, b, n, nrhs, ldb);
  if (!legal)
    return Delegate<Real>("LAPACKE_dgetrs", "dgetrs", kRefused, layout, trans, n, nrhs, a, lda,
                          ipiv, b, ldb);
  lapack_int info = 0;
  if (!RowMajor(layout)) {
    dgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
    return info;
  }
  try {
    std::vector<double> at = ToColumnMajor(a, n, n, lda);
    std::vector<double> bt = ToColumnMajor(b, n, nrhs, ldb);
    const lapack_int ldt = Max1(n);
    dgetrs_(&trans, &n, &nrhs, at.data(), &ldt, ipiv, bt.data(), &ldt, &info, 1);
    FromColumnMajor(bt, n, nrhs, b, ldb);
  } catch (const std::bad_alloc &) {
    return LAPACK_TRANSPOSE_MEMORY_ERROR;
  }
  return info;
}

lapack_int LAPACKE_dposv(int layout, char uplo, lapack_int n, lapack_int nrhs, double *a,
                         lapack_int lda, double *b, lapack_int ldb) {
  using Real =
      lapack_int(int, char, lapack_int, lapack_int, double *, lapack_int, double *, lapack_int);
  const bool legal = !Nested() && KnownLayout(layout) && IsUplo(uplo) && n >= 0 && nrhs >= 0 &&
                     lda >= Max1(n) && ldb >= (RowMajor(layout) ? Max1(nrhs) : Max1(n)) &&
                     !AnyNaNTriangle(layout, uplo, a, n, lda) && !AnyNaN(layout, b, n, nrhs, ldb);
  if (!legal)
    return Delegate<Real>("LAPACKE_dposv", "dposv", kRefused, layout, uplo, n, nrhs, a, lda, b,
                          ldb);
  lapack_int info = 0;
  if (!RowMajor(layout)) {
    dposv_(&uplo, &n, &nrhs, a, &lda, b, &ldb, &info, 1);
    return info;
  }
  // The whole matrix goes over and back: dposv writes only the `uplo`
  // triangle, so the other comes back as it was, as with LAPACKE's
  // triangle-only copies.
  try {
    std::vector<double> at = ToColumnMajor(a, n, n, lda);
    std::vector<double> bt = ToColumnMajor(b, n, nrhs, ldb);
    const lapack_int ldt = Max1(n);
    dposv_(&uplo, &n, &nrhs, at.data(), &ldt, bt.data(), &ldt, &info, 1);
    FromColumnMajor(at, n, n, a, lda);
    FromColumnMajor(bt, n, nrhs, b, ldb);
  } catch (const std::bad_alloc &) {
    return LAPACK_TRANSPOSE_MEMORY_ERROR;
  }
  return info;
}

lapack_int LAPACKE_dsyev(int layout, char jobz, char uplo, lapack_int n, double *a, lapack_int lda,
                         double *w) {
  using Real = lapack_int(int, char, char, lapack_int, double *, lapack_int, double *);
  using Query = void(const char *, const char *, const lapack_int *, double *, const lapack_int *,
                     double *, double *, const lapack_int *, lapack_int *, size_t, size_t);
  const bool legal = !Nested() && KnownLayout(layout) && IsJobz(jobz) && IsUplo(uplo) && n >= 0 &&
                     lda >= Max1(n) && !AnyNaNTriangle(layout, uplo, a, n, lda);
  if (!legal)
    return Delegate<Real>("LAPACKE_dsyev", "dsyev", kRefused, layout, jobz, uplo, n, a, lda, w);
  lapack_int info = 0;
  try {
    // LAPACKE's own sequence: the workspace query, then the call with the
    // optimal lwork. The query runs on the program's LAPACK (the server's
    // answer is never returned), as the Fortran entry point would run it.
    static Query *const local_dsyev = Local<Query>("dsyev_");
    double optimal = 0;
    const lapack_int query = -1;
    {
      LocalScope scope;
      local_dsyev(&jobz, &uplo, &n, a, &lda, w, &optimal, &query, &info, 1, 1);
    }
    if (info != 0) return info;
    const lapack_int lwork = static_cast<lapack_int>(optimal);
    std::vector<double> work(static_cast<std::size_t>(Max1(lwork)));
    if (!RowMajor(layout)) {
      dsyev_(&jobz, &uplo, &n, a, &lda, w, work.data(), &lwork, &info, 1, 1);
      return info;
    }
    std::vector<double> at = ToColumnMajor(a, n, n, lda);
    const lapack_int ldt = Max1(n);
    dsyev_(&jobz, &uplo, &n, at.data(), &ldt, w, work.data(), &lwork, &info, 1, 1);
    FromColumnMajor(at, n, n, a, lda);
  } catch (const std::bad_alloc &) {
    return LAPACK_WORK_MEMORY_ERROR;
  }
  return info;
}

}  // extern "C"
