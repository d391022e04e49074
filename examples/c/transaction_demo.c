/*
 * transaction_demo.c - a transaction block: a chain of three matrix
 * products, G = ((A * B) * D) * F, and two products independent of it,
 * recorded between Ninf_transaction_begin and Ninf_transaction_end and run
 * as one dataflow graph (docs/transactions.md).
 *
 *     transaction_demo [-server host] [-port n] [n]      (n defaults to 300)
 *
 * The independent products run beside the chain (on other servers when
 * NINF_METASERVER places the calls); the chain's intermediates C and E are
 * marked with Ninf_transaction_discard, so their final values are not
 * written back. The program checks G and the other products against local
 * ones and prints VERIFIED, then where each call ran.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ninf.h"
#include "stubs/lib/ninf_stdlib.h"

static double *matrix(long n, unsigned seed) {
  double *m = malloc((size_t)(n * n) * sizeof *m);
  if (!m) return NULL;
  srand(seed);
  for (long i = 0; i < n * n; i++) m[i] = (double)rand() / RAND_MAX - 0.5;
  return m;
}

/* The largest difference relative to the largest element of want. */
static double relative_error(long n, const double *got, const double *want) {
  double err = 0, scale = 0;
  for (long i = 0; i < n * n; i++) {
    err = fmax(err, fabs(got[i] - want[i]));
    scale = fmax(scale, fabs(want[i]));
  }
  return scale > 0 ? err / scale : err;
}

int main(int argc, char **argv) {
  argc = Ninf_parse_arg(argc, argv);
  const long n = argc > 1 ? atol(argv[1]) : 300;
  if (argc < 0 || n <= 0) {
    fprintf(stderr, "usage: transaction_demo [-server host] [-port n] [n > 0]\n");
    return 2;
  }
  double *a = matrix(n, 1), *b = matrix(n, 2), *d = matrix(n, 3), *f = matrix(n, 4);
  double *c = matrix(n, 5), *e = matrix(n, 6), *g = matrix(n, 7), *p = matrix(n, 8),
         *q = matrix(n, 9);
  if (!a || !b || !c || !d || !e || !f || !g || !p || !q) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }

  if (Ninf_transaction_begin() != 0) return Ninf_perror("Ninf_transaction_begin"), 1;
  Ninf_call("dmmul", n, a, b, c); /* C = A * B */
  Ninf_call("dmmul", n, c, d, e); /* E = C * D, after the first */
  Ninf_call("dmmul", n, e, f, g); /* G = E * F, after the second */
  Ninf_call("dmmul", n, b, d, p); /* independent of the chain */
  Ninf_call("dmmul", n, f, a, q); /* independent too */
  Ninf_transaction_discard(c);    /* intermediates: not written back */
  Ninf_transaction_discard(e);
  if (Ninf_transaction_end() != 0) {
    Ninf_perror("Ninf_transaction_end");
    for (int i = 0; i < Ninf_transaction_calls(); i++)
      fprintf(stderr, "  call %d: %s\n", i, Ninf_transaction_call_detail(i));
    return 1;
  }

  /* The same products locally. */
  double *lc = matrix(n, 0), *le = matrix(n, 0), *lg = matrix(n, 0), *lp = matrix(n, 0),
         *lq = matrix(n, 0);
  if (!lc || !le || !lg || !lp || !lq) return fprintf(stderr, "out of memory\n"), 1;
  dmmul(n, a, b, lc);
  dmmul(n, lc, d, le);
  dmmul(n, le, f, lg);
  dmmul(n, b, d, lp);
  dmmul(n, f, a, lq);
  double *c0 = matrix(n, 5);
  const int discarded_kept = c0 && memcmp(c, c0, (size_t)(n * n) * sizeof *c) == 0;
  const double err =
      fmax(relative_error(n, g, lg), fmax(relative_error(n, p, lp), relative_error(n, q, lq)));
  const int ok = err < 1e-10 && discarded_kept;
  printf("n = %ld: G, P, Q relative error %.2e; C %s -> %s\n", n, err,
         discarded_kept ? "kept its old value" : "was overwritten", ok ? "VERIFIED" : "FAILED");
  for (int i = 0; i < Ninf_transaction_calls(); i++) {
    Ninf_call_info info;
    if (Ninf_transaction_call_info(i, &info) == 0)
      printf("  call %d ran on %s: %.3f s (%.3f s computing)\n", i, info.server, info.total_seconds,
             info.compute_seconds);
  }
  free(a), free(b), free(c), free(d), free(e), free(f), free(g), free(p), free(q);
  free(lc), free(le), free(lg), free(lp), free(lq), free(c0);
  return ok ? 0 : 1;
}
