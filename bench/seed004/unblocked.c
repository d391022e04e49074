/*
 * unblocked.c - LINPACK's dgefa / dgesl algorithm (unblocked.h). Every
 * column step touches the whole trailing matrix once (a daxpy per column),
 * so above the cache size it runs at memory speed: that is the point of the
 * curve, the gap a blocked LAPACK closes.
 */
#include "bench/seed004/unblocked.h"

#include <math.h>

/* y += t x over len elements: LINPACK's daxpy with unit strides. */
static void axpy(int len, double t, const double *x, double *y) {
  for (int i = 0; i < len; i++) y[i] += t * x[i];
}

int unblocked_dgefa(double *a, int lda, int n, int *ipvt) {
  int info = 0;
  for (int k = 0; k < n - 1; k++) {
    double *col = a + (long)k * lda;
    /* The pivot: the largest magnitude in column k at or below the diagonal. */
    int l = k;
    for (int i = k + 1; i < n; i++)
      if (fabs(col[i]) > fabs(col[l])) l = i;
    ipvt[k] = l;
    if (col[l] == 0.0) {
      info = k + 1;
      continue;
    }
    if (l != k) {
      double swap = col[l];
      col[l] = col[k];
      col[k] = swap;
    }
    /* The multipliers, negated as dgefa stores them. */
    double t = -1.0 / col[k];
    for (int i = k + 1; i < n; i++) col[i] *= t;
    /* Row elimination, one column at a time (column-oriented). */
    for (int j = k + 1; j < n; j++) {
      double *cj = a + (long)j * lda;
      double s = cj[l];
      if (l != k) {
        cj[l] = cj[k];
        cj[k] = s;
      }
      axpy(n - k - 1, s, col + k + 1, cj + k + 1);
    }
  }
  if (n > 0) {
    ipvt[n - 1] = n - 1;
    if (a[(long)(n - 1) * lda + n - 1] == 0.0) info = n;
  }
  return info;
}

void unblocked_dgesl(const double *a, int lda, int n, const int *ipvt, double *b) {
  /* Forward: b = L^-1 P b, with the stored (negated) multipliers. */
  for (int k = 0; k < n - 1; k++) {
    int l = ipvt[k];
    double t = b[l];
    if (l != k) {
      b[l] = b[k];
      b[k] = t;
    }
    axpy(n - k - 1, t, a + (long)k * lda + k + 1, b + k + 1);
  }
  /* Back: x = U^-1 b, column by column. */
  for (int k = n - 1; k >= 0; k--) {
    const double *col = a + (long)k * lda;
    b[k] /= col[k];
    axpy(k, -b[k], col, b);
  }
}
