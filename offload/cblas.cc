// cblas_dgemm: a legal call becomes the column-major dgemm_ call that CBLAS
// itself makes of it (row-major C = op(A) op(B) is column-major
// C' = op(B)' op(A)': the operands and m/n swapped, as OpenBLAS's and
// netlib's cblas_dgemm do) and goes through lapack.cc's dgemm_, which
// decides where it runs. An illegal one goes to the program's own
// cblas_dgemm, whose error report the caller then sees.
//
// <cblas.h> is not included: Debian has two (OpenBLAS's and netlib's),
// whose enum types differ in name though not in value or size. The
// enumerations are passed as int, which is how C passes an enum here.
#include <cstddef>

#include "offload/policy.h"
#include "offload/runtime.h"

extern "C" void dgemm_(const char *transa, const char *transb, const int *m, const int *n,
                       const int *k, const double *alpha, const double *a, const int *lda,
                       const double *b, const int *ldb, const double *beta, double *c,
                       const int *ldc, size_t transa_len, size_t transb_len);

namespace ninf::offload {
namespace {

// The values of CBLAS's enumerations, the same in every cblas.h.
constexpr int kRowMajor = 101, kColMajor = 102;
constexpr int kNoTrans = 111, kTrans = 112, kConjTrans = 113;

// The Fortran flag of a CBLAS transposition, or '\0' for a value CBLAS
// refuses (CblasConjNoTrans, 114, included: netlib's cblas refuses it).
char FlagOf(int trans) {
  switch (trans) {
    case kNoTrans:
      return 'N';
    case kTrans:
      return 'T';
    case kConjTrans:
      return 'C';
    default:
      return '\0';
  }
}

}  // namespace
}  // namespace ninf::offload

extern "C" void cblas_dgemm(int order, int trans_a, int trans_b, int m, int n, int k, double alpha,
                            const double *a, int lda, const double *b, int ldb, double beta,
                            double *c, int ldc) {
  using namespace ninf::offload;
  using Real = void(int, int, int, int, int, int, double, const double *, int, const double *, int,
                    double, double *, int);
  const char ta = FlagOf(trans_a), tb = FlagOf(trans_b);
  const bool row = order == kRowMajor;
  const bool legal = !Nested() && (row || order == kColMajor) && ta && tb &&
                     (row ? DgemmLegal(tb, ta, n, m, k, ldb, lda, ldc)
                          : DgemmLegal(ta, tb, m, n, k, lda, ldb, ldc));
  if (!legal) {
    Real *real = Local<Real>("cblas_dgemm");
    Call call;
    call.routine = "dgemm";
    call.local_only =
        "arguments CBLAS refuses (order, transposition or leading dimension): "
        "its own answer";
    call.local = [&] {
      real(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    };
    Run(call);
    return;
  }
  if (row)
    dgemm_(&tb, &ta, &n, &m, &k, &alpha, b, &ldb, a, &lda, &beta, c, &ldc, 1, 1);
  else
    dgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
}
