/*
 * dmmul.c - matrix product for the standard library, the classic Ninf
 * example routine: C = A * B for n x n row-major matrices.
 */
#include <cblas.h>

#include "stubs/lib/ninf_stdlib.h"

void dmmul(long n, const double *A, const double *B, double *C) {
  /* An empty product has nothing to write; a negative n never reaches here
   * through a stub (the dimension check rejects it) but must not reach BLAS. */
  if (n <= 0) return;
  /* OpenBLAS picks its thread count from OPENBLAS_NUM_THREADS, which ninfd
   * sets per job so that concurrent jobs never oversubscribe the cores. */
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)n, (blasint)n, (blasint)n, 1.0, A,
              (blasint)n, B, (blasint)n, 0.0, C, (blasint)n);
}
