/*
 * transaction_program.c - a Ninf client that also calls LAPACK inside a
 * transaction block (docs/transactions.md): there Ninf_call only records a
 * call, so libninf_offload must run the block's dgesv_ locally, with its
 * results at once. The test builds it with ninfcc (the reference) and
 * ninfcc --offload, and compares OUTFILE bit for bit.
 *
 *   transaction_program N OUTFILE
 */
#include <lapack.h>
#include <stdio.h>
#include <stdlib.h>

#include "ninf.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s N OUTFILE\n", argv[0]);
    return 2;
  }
  const int n = atoi(argv[1]);
  if (n < 1) return 2;
  double *a = malloc(sizeof(double) * (size_t)n * (size_t)n);
  double *b = malloc(sizeof(double) * (size_t)n);
  lapack_int *ipiv = malloc(sizeof(lapack_int) * (size_t)n);
  if (!a || !b || !ipiv) return 1;
  unsigned long long seed = 77;
  for (int i = 0; i < n * n; i++) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    a[i] = (double)(seed >> 11) / 9007199254740992.0 - 0.5;
  }
  for (int i = 0; i < n; i++) b[i] = 1.0;

  if (Ninf_transaction_begin() != 0) {
    Ninf_perror("Ninf_transaction_begin");
    return 1;
  }
  lapack_int nn = n, one = 1, info = -99;
  LAPACK_dgesv(&nn, &one, a, &nn, ipiv, b, &nn, &info);
  /* Inside the block, and the solution is already there. */
  const double first = b[0];
  if (Ninf_transaction_end() != 0) {
    Ninf_perror("Ninf_transaction_end");
    return 1;
  }

  FILE *out = fopen(argv[2], "wb");
  if (!out) return 1;
  fwrite(&info, sizeof info, 1, out);
  fwrite(&first, sizeof first, 1, out);
  fwrite(b, sizeof(double), (size_t)n, out);
  fwrite(a, sizeof(double), (size_t)n * (size_t)n, out);
  if (fclose(out) != 0) return 1;
  printf("transaction_program: info=%d\n", (int)info);
  free(a);
  free(b);
  free(ipiv);
  return 0;
}
