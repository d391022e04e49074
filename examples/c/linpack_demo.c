/*
 * linpack_demo.c - solve a random dense system on a Ninf server, then the
 * same system locally, and compare.
 *
 *     linpack_demo [-server host] [-port n] [n [routine]]
 *
 * n defaults to 2000, routine to "dgesv"; "pdgesv" solves the same system
 * with ScaLAPACK as an MPI job on the server (docs/mpi.md).
 *
 * The remote call has exactly the arguments of LAPACK's own dgesv:
 *
 *     Ninf_call("dgesv", n, nrhs, a, lda, ipiv, b, ldb, &info);
 *
 * The server is NINF_SERVER=host:port (default localhost:3000) unless
 * -server/-port say otherwise. Each solution is checked with the LINPACK
 * residual ||Ax - b||_inf / (||A||_inf ||x||_inf n eps), which must stay
 * below 16; the exit status is non-zero if a check or a call fails.
 *
 * Threads: the local solve uses OpenBLAS's thread count in this process
 * (OPENBLAS_NUM_THREADS, else every core); the remote one uses what ninfd
 * grants the call (a lone call gets every core under the default
 * thread_budget, "adaptive"); Ninf_get_call_info tells how many, and where
 * the remote call's time went.
 */
#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ninf.h"

/* The residual test of LINPACK/HPL: a correct solve stays well below this. */
static const double kResidualLimit = 16.0;

typedef struct {
  const char *label;
  double seconds;
  double gflops;
  double residual;
} Solve;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Entries uniform in [-0.5, 0.5) from a fixed seed, column-major, lda = n. */
static void fill_random(double *a, size_t count) {
  unsigned long long state = 42;
  for (size_t i = 0; i < count; i++) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    a[i] = (double)(state >> 11) / 9007199254740992.0 - 0.5;
  }
}

/* ||A||_inf of a column-major n x n matrix: the largest row sum. */
static double norm_inf_matrix(int n, const double *a) {
  double *rows = calloc((size_t)n, sizeof *rows);
  if (rows == NULL) return NAN;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) rows[i] += fabs(a[(size_t)j * n + i]);
  double worst = 0;
  for (int i = 0; i < n; i++) worst = fmax(worst, rows[i]);
  free(rows);
  return worst;
}

static double norm_inf_vector(int n, const double *x) {
  double worst = 0;
  for (int i = 0; i < n; i++) worst = fmax(worst, fabs(x[i]));
  return worst;
}

/* ||A x - b||_inf / (||A||_inf ||x||_inf n eps); NaN if out of memory. */
static double residual(int n, const double *a, const double *x, const double *b) {
  double *r = malloc((size_t)n * sizeof *r);
  if (r == NULL) return NAN;
  memcpy(r, b, (size_t)n * sizeof *r);
  cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, a, n, x, 1, -1.0, r, 1);
  double res =
      norm_inf_vector(n, r) / (norm_inf_matrix(n, a) * norm_inf_vector(n, x) * n * DBL_EPSILON);
  free(r);
  return res;
}

/* The remote routine: dgesv, or pdgesv (the same arguments, an MPI job). */
static const char *routine = "dgesv";

/*
 * Solves A x = b on the server (remote != 0) or here, from fresh copies of
 * a0 and b0, and fills *out. Returns 0, or -1 after printing why.
 */
static int solve(int remote, int n, const double *a0, const double *b0, double *a, double *b,
                 int *ipiv, Solve *out) {
  size_t nn = (size_t)n * n;
  memcpy(a, a0, nn * sizeof *a);
  memcpy(b, b0, (size_t)n * sizeof *b);
  int nrhs = 1, lda = n, ldb = n, info = 0;
  double start = now();
  if (remote) {
    if (Ninf_call(routine, n, nrhs, a, lda, ipiv, b, ldb, &info) != 0) {
      Ninf_perror(routine);
      return -1;
    }
  } else {
    /* Column-major LAPACKE calls OpenBLAS's dgesv_ directly, no copies. */
    info = LAPACKE_dgesv(LAPACK_COL_MAJOR, n, nrhs, a, lda, ipiv, b, ldb);
  }
  out->seconds = now() - start;
  if (info != 0) {
    fprintf(stderr, "%s dgesv: info = %d\n", out->label, info);
    return -1;
  }
  double flops = 2.0 / 3.0 * n * (double)n * n + 2.0 * n * (double)n;
  out->gflops = flops / out->seconds * 1e-9;
  out->residual = residual(n, a0, b, b0);
  return 0;
}

static void print_table(int n, const Solve *remote, const Solve *local) {
  printf("\nn = %d, one right-hand side\n", n);
  printf("%-8s %12s %10s %12s\n", "", "time (s)", "GFLOPS", "residual");
  const Solve *rows[2] = {remote, local};
  for (int i = 0; i < 2; i++)
    printf("%-8s %12.4f %10.2f %12.4f\n", rows[i]->label, rows[i]->seconds, rows[i]->gflops,
           rows[i]->residual);
  printf("remote / local GFLOPS = %.3f\n", remote->gflops / local->gflops);
}

/* Runs both solves on freshly filled buffers; returns the exit status. */
static int run(int n, double *a0, double *a, double *b0, double *b, int *ipiv) {
  size_t nn = (size_t)n * n;
  fill_random(a0, nn);
  /* b = A * ones, so the exact solution is all ones. */
  for (int i = 0; i < n; i++) b0[i] = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) b0[i] += a0[(size_t)j * n + i];

  const char *env = getenv("OPENBLAS_NUM_THREADS");
  printf("local threads: %d (OpenBLAS; OPENBLAS_NUM_THREADS=%s)\n", openblas_get_num_threads(),
         env != NULL ? env : "unset");
  /* The kernels OpenBLAS picked for this CPU (OPENBLAS_CORETYPE overrides):
     ninfd logs its executables' as event=openblas_core. */
  printf("local OpenBLAS kernels: %s\n", openblas_get_corename());

  Solve remote = {"remote", 0, 0, 0}, local = {"local", 0, 0, 0};
  if (solve(1, n, a0, b0, a, b, ipiv, &remote) != 0) return 1;
  Ninf_call_info ci;
  if (Ninf_get_call_info(&ci) == 0)
    printf(
        "remote threads: %d on %s; queued %.4f s, arguments in %.4f s, dgesv %.4f s, "
        "results back %.4f s\n",
        ci.threads, ci.server, ci.queue_seconds, ci.server_recv_seconds, ci.compute_seconds,
        ci.recv_seconds);
  if (solve(0, n, a0, b0, a, b, ipiv, &local) != 0) return 1;
  print_table(n, &remote, &local);

  int status = 0;
  const Solve *checks[2] = {&remote, &local};
  for (int i = 0; i < 2; i++) {
    /* Written so that a NaN residual fails too. */
    if (!(checks[i]->residual < kResidualLimit)) {
      fprintf(stderr, "%s residual %.4g exceeds %.0f: wrong solution\n", checks[i]->label,
              checks[i]->residual, kResidualLimit);
      status = 1;
    }
  }
  printf("%s\n", status == 0 ? "residual check passed" : "residual check FAILED");
  return status;
}

int main(int argc, char **argv) {
  argc = Ninf_parse_arg(argc, argv);
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  if (argc > 2) routine = argv[2];
  if (argc > 3 || n < 1 || n > 46340) {
    fprintf(stderr,
            "usage: %s [-server host] [-port n] [n (1..46340, default 2000) [routine (dgesv)]]\n",
            argv[0]);
    return 2;
  }
  size_t nn = (size_t)n * n;
  double *a0 = malloc(nn * sizeof *a0), *a = malloc(nn * sizeof *a);
  double *b0 = malloc((size_t)n * sizeof *b0), *b = malloc((size_t)n * sizeof *b);
  int *ipiv = malloc((size_t)n * sizeof *ipiv);
  int status = 1;
  if (a0 == NULL || a == NULL || b0 == NULL || b == NULL || ipiv == NULL)
    fprintf(stderr, "out of memory for n = %d\n", n);
  else
    status = run(n, a0, a, b0, b, ipiv);
  free(a0);
  free(a);
  free(b0);
  free(b);
  free(ipiv);
  return status;
}
