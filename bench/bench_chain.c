/*
 * bench_chain.c - a chain of products in one transaction block, where each
 * call reads the previous result and only the last is needed: the client
 * of bench/chain_sites.sh (issue 11, benchmark (b)).
 *
 *     bench_chain [--length K] N
 *
 * X_1 = A * B_1, X_2 = X_1 * B_2, ..., X_K = X_{K-1} * B_K, with X_1 ..
 * X_{K-1} marked Ninf_transaction_discard. With NINF_FORWARD=1 (the
 * default) the intermediates stay on the servers; with NINF_FORWARD=0 each
 * comes back to the client and goes out again. Bare names: NINF_METASERVER
 * places the calls. One line:
 *
 *     chain length=K n=N forward=F seconds=S servers=ADDR:count,... verified=1
 *
 * X_K is checked against the same chain computed here; the exit status is
 * non-zero if a call fails or the product differs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "client/ninf.h"

enum { kMaxLength = 32 };

static double *random_matrix(long n, unsigned long long seed) {
  double *m = malloc((size_t)(n * n) * sizeof *m);
  if (!m) return NULL;
  for (long i = 0; i < n * n; i++) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    m[i] = ((double)(seed >> 11) / 9007199254740992.0 - 0.5) / sqrt((double)n);
  }
  return m;
}

/* c = a * b, row-major, in the i-k-j order that streams through memory. */
static void local_product(long n, const double *a, const double *b, double *c) {
  memset(c, 0, (size_t)(n * n) * sizeof *c);
  for (long i = 0; i < n; i++)
    for (long k = 0; k < n; k++) {
      const double aik = a[i * n + k];
      for (long j = 0; j < n; j++) c[i * n + j] += aik * b[k * n + j];
    }
}

int main(int argc, char **argv) {
  int length = 3;
  int i = 1;
  if (i + 1 < argc && !strcmp(argv[i], "--length")) {
    length = atoi(argv[i + 1]);
    i += 2;
  }
  long n = 0;
  if (i != argc - 1 || length < 1 || length > kMaxLength || (n = atol(argv[i])) <= 0) {
    fprintf(stderr, "usage: bench_chain [--length K (1..%d)] N\n", kMaxLength);
    return 2;
  }
  double *a = random_matrix(n, 1), *b[kMaxLength], *x[kMaxLength + 1];
  x[0] = a;
  for (int k = 0; k < length; k++) {
    b[k] = random_matrix(n, 100 + (unsigned long long)k);
    x[k + 1] = calloc((size_t)(n * n), sizeof(double));
    if (!b[k] || !x[k + 1]) return fprintf(stderr, "out of memory\n"), 1;
  }

  const double t0 = bench_now();
  if (Ninf_transaction_begin() != 0) return Ninf_perror("Ninf_transaction_begin"), 1;
  for (int k = 0; k < length; k++)
    if (Ninf_call("dmmul", n, x[k], b[k], x[k + 1]) != 0) Ninf_perror("recording dmmul");
  for (int k = 1; k < length; k++) Ninf_transaction_discard(x[k]);
  if (Ninf_transaction_end() != 0) {
    Ninf_perror("Ninf_transaction_end");
    return 1;
  }
  const double seconds = bench_now() - t0;
  char where[4096];
  bench_block_servers(where, sizeof where);

  /* The same chain here. */
  double *want = malloc((size_t)(n * n) * sizeof *want),
         *next = malloc((size_t)(n * n) * sizeof *next);
  if (!want || !next) return fprintf(stderr, "out of memory\n"), 1;
  memcpy(want, a, (size_t)(n * n) * sizeof *want);
  for (int k = 0; k < length; k++) {
    local_product(n, want, b[k], next);
    double *t = want;
    want = next;
    next = t;
  }
  double err = 0, scale = 0;
  for (long e = 0; e < n * n; e++) {
    err = fmax(err, fabs(want[e] - x[length][e]));
    scale = fmax(scale, fabs(want[e]));
  }
  const int verified = err <= 1e-10 * (scale > 0 ? scale : 1);
  const char *forward = getenv("NINF_FORWARD");
  printf("chain length=%d n=%ld forward=%s seconds=%.3f servers=%s verified=%d\n", length, n,
         forward && *forward ? forward : "1", seconds, where, verified);
  return verified ? 0 : 1;
}
