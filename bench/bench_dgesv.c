/*
 * bench_dgesv.c - remote against local LAPACK dgesv, same matrix, same
 * thread count.
 *
 *     bench_dgesv [-server host] [-port n] [--runs R] [n ...]
 *
 * For each n (default 1000 2000 4000) it solves one random system R times
 * (default 3) on the server in NINF_SERVER and R times here, and prints the
 * best of each:
 *     dgesv n=N threads=T local_gflops=.. remote_gflops=.. ratio=remote/local
 * GFLOPS count 2/3 n^3 + 2 n^2 operations. The local solve uses OpenBLAS
 * with this process's OPENBLAS_NUM_THREADS (T above); run ninfd with the same
 * value and --slots 1 so the remote job gets as many threads.
 */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "client/ninf.h"

enum { kMaxSizes = 16 };

typedef BenchProblem Problem;

/* One solve from fresh copies; GFLOPS, or negative on failure. */
static double solve_once(Problem *p, int remote) {
  int n = p->n, nrhs = 1, info = 0;
  memcpy(p->a, p->a0, (size_t)n * n * sizeof(double));
  memcpy(p->b, p->b0, (size_t)n * sizeof(double));
  double start = bench_now();
  if (remote) {
    if (Ninf_call("dgesv", n, nrhs, p->a, n, p->ipiv, p->b, n, &info) != 0) {
      Ninf_perror("Ninf_call(dgesv)");
      return -1;
    }
  } else {
    info = LAPACKE_dgesv(LAPACK_COL_MAJOR, n, nrhs, p->a, n, p->ipiv, p->b, n);
  }
  double seconds = bench_now() - start;
  double worst = 0;
  for (int i = 0; i < n; i++) worst = fmax(worst, fabs(p->b[i] - 1.0));
  if (info != 0 || !(worst < 1e-6)) {
    fprintf(stderr, "bench_dgesv: %s n=%d wrong solution (info %d, max error %g)\n",
            remote ? "remote" : "local", n, info, worst);
    return -1;
  }
  return (2.0 / 3.0 * n * (double)n * n + 2.0 * n * (double)n) / seconds * 1e-9;
}

/* Best GFLOPS of `runs` solves, after one unmeasured warm-up solve. */
static double best_of(Problem *p, int remote, int runs) {
  double best = solve_once(p, remote);
  if (best < 0) return -1;
  best = 0;
  for (int r = 0; r < runs; r++) {
    double g = solve_once(p, remote);
    if (g < 0) return -1;
    best = fmax(best, g);
  }
  return best;
}

int main(int argc, char **argv) {
  argc = Ninf_parse_arg(argc, argv);
  int runs = 3, sizes[kMaxSizes], count = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = atoi(argv[++i]);
    } else if (count < kMaxSizes && atoi(argv[i]) > 0 && atoi(argv[i]) <= 46340) {
      sizes[count++] = atoi(argv[i]);
    } else {
      runs = 0;
    }
  }
  if (runs < 1) {
    fprintf(stderr, "usage: %s [-server host] [-port n] [--runs R] [n ...]\n", argv[0]);
    return 2;
  }
  if (count == 0) {
    sizes[count++] = 1000;
    sizes[count++] = 2000;
    sizes[count++] = 4000;
  }
  int status = 0;
  for (int s = 0; s < count && status == 0; s++) {
    Problem p;
    if (bench_problem_init(&p, sizes[s], 7) != 0) {
      fprintf(stderr, "bench_dgesv: out of memory for n=%d\n", sizes[s]);
      status = 1;
    } else {
      double local = best_of(&p, 0, runs);
      double remote = local < 0 ? -1 : best_of(&p, 1, runs);
      if (remote < 0) {
        status = 1;
      } else {
        printf("dgesv n=%d threads=%d runs=%d local_gflops=%.2f remote_gflops=%.2f ratio=%.3f\n",
               sizes[s], openblas_get_num_threads(), runs, local, remote, remote / local);
        fflush(stdout);
      }
    }
    bench_problem_free(&p);
  }
  return status;
}
