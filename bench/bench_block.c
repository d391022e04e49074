/*
 * bench_block.c - a block of independent dmmul calls run as a transaction
 * block against the same calls one by one: the client of
 * bench/block_sites.sh (issue 11, benchmark (a)).
 *
 *     bench_block [--calls K] [--rounds R] N
 *
 * Each round makes K products C_k = A_k * B_k of N x N matrices twice:
 * once with K plain Ninf_call one after another, once recorded between
 * Ninf_transaction_begin and Ninf_transaction_end (the order alternates
 * between rounds, so neither always goes first). Bare names: NINF_METASERVER
 * places every call. One line per round:
 *
 *     round r=R calls=K n=N sequential=S block=B ratio=S/B servers=ADDR:count,...
 *
 * `servers` counts where the block's calls ran. The exit status is non-zero
 * if a call fails or the block's products differ from the sequential ones.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "client/ninf.h"

enum { kMaxCalls = 64 };

typedef struct {
  long n;
  int calls;
  double *a[kMaxCalls], *b[kMaxCalls], *c_seq[kMaxCalls], *c_block[kMaxCalls];
} Block;

static double *random_matrix(long n, unsigned long long seed) {
  double *m = malloc((size_t)(n * n) * sizeof *m);
  if (!m) return NULL;
  for (long i = 0; i < n * n; i++) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    m[i] = (double)(seed >> 11) / 9007199254740992.0 - 0.5;
  }
  return m;
}

static double sequential(Block *b) {
  double t = bench_now();
  for (int k = 0; k < b->calls; k++)
    if (Ninf_call("dmmul", b->n, b->a[k], b->b[k], b->c_seq[k]) != 0) {
      Ninf_perror("dmmul");
      return -1;
    }
  return bench_now() - t;
}

static double block(Block *b) {
  double t = bench_now();
  if (Ninf_transaction_begin() != 0) return Ninf_perror("Ninf_transaction_begin"), -1;
  for (int k = 0; k < b->calls; k++)
    if (Ninf_call("dmmul", b->n, b->a[k], b->b[k], b->c_block[k]) != 0)
      Ninf_perror("recording dmmul");
  if (Ninf_transaction_end() != 0) return Ninf_perror("Ninf_transaction_end"), -1;
  return bench_now() - t;
}

int main(int argc, char **argv) {
  Block b = {.calls = 8};
  int rounds = 3;
  int i = 1;
  for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
    if (!strcmp(argv[i], "--calls"))
      b.calls = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--rounds"))
      rounds = atoi(argv[i + 1]);
    else
      break;
  }
  if (i != argc - 1 || b.calls < 1 || b.calls > kMaxCalls || rounds < 1 ||
      (b.n = atol(argv[i])) <= 0) {
    fprintf(stderr, "usage: bench_block [--calls K (1..%d)] [--rounds R] N\n", kMaxCalls);
    return 2;
  }
  for (int k = 0; k < b.calls; k++) {
    b.a[k] = random_matrix(b.n, 2 * k + 1);
    b.b[k] = random_matrix(b.n, 2 * k + 2);
    b.c_seq[k] = random_matrix(b.n, 0);
    b.c_block[k] = random_matrix(b.n, 0);
    if (!b.a[k] || !b.b[k] || !b.c_seq[k] || !b.c_block[k])
      return fprintf(stderr, "no memory\n"), 1;
  }
  for (int r = 0; r < rounds; r++) {
    double s, t;
    if (r % 2 == 0) {
      s = sequential(&b);
      t = block(&b);
    } else {
      t = block(&b);
      s = sequential(&b);
    }
    if (s < 0 || t < 0) return 1;
    for (int k = 0; k < b.calls; k++)
      for (long e = 0; e < b.n * b.n; e++)
        if (fabs(b.c_seq[k][e] - b.c_block[k][e]) > 1e-9 * (1 + fabs(b.c_seq[k][e]))) {
          fprintf(stderr, "round %d: product %d differs at %ld\n", r, k, e);
          return 1;
        }
    char where[1024];
    bench_block_servers(where, sizeof where);
    printf("round r=%d calls=%d n=%ld sequential=%.3f block=%.3f ratio=%.2f servers=%s\n", r,
           b.calls, b.n, s, t, s / t, where);
    fflush(stdout);
  }
  return 0;
}
