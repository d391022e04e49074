/*
 * daxpy.c - y = alpha * x + y for the standard library: the smallest
 * routine that updates an INOUT array, which transaction blocks chain.
 */
#include <cblas.h>

#include "stubs/lib/ninf_stdlib.h"

void daxpy(long n, double alpha, const double *x, double *y) {
  if (n <= 0) return;
  cblas_daxpy((blasint)n, alpha, x, 1, y, 1);
}
