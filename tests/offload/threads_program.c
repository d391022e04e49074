/*
 * threads_program.c - an ordinary threaded LAPACK program that knows
 * nothing of Ninf: THREADS threads each solve CALLS systems with the
 * Fortran dgesv_ at once. The test (offload_test.py) runs it as built
 * (cc ... -llapack -lpthread) and under LD_PRELOAD=libninf_offload.so, and
 * compares OUTFILE (every thread's INFOs and solutions, raw bytes) bit for
 * bit: concurrent calls through the library, local or remote, give what
 * they give alone.
 *
 *   threads_program N OUTFILE
 */
#include <lapack.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { THREADS = 4, CALLS = 3 };

struct work {
  int index;
  int n;
  double *x;        /* CALLS solutions of n */
  lapack_int *info; /* CALLS INFOs */
};

static void *solve(void *arg) {
  struct work *w = arg;
  const int n = w->n;
  unsigned long long seed = 1000003ULL * (unsigned long long)(w->index + 1);
  double *a = malloc(sizeof(double) * (size_t)n * (size_t)n);
  lapack_int *ipiv = malloc(sizeof(lapack_int) * (size_t)n);
  if (!a || !ipiv) {
    perror("malloc");
    exit(1);
  }
  for (int c = 0; c < CALLS; c++) {
    double *b = w->x + (size_t)c * (size_t)n;
    for (int i = 0; i < n * n; i++) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      a[i] = (double)(seed >> 11) / 9007199254740992.0 - 0.5;
    }
    for (int i = 0; i < n; i++) b[i] = i + c;
    lapack_int nn = n, one = 1;
    LAPACK_dgesv(&nn, &one, a, &nn, ipiv, b, &nn, &w->info[c]);
  }
  free(a);
  free(ipiv);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s N OUTFILE\n", argv[0]);
    return 2;
  }
  const int n = atoi(argv[1]);
  if (n < 1) {
    fprintf(stderr, "N must be positive\n");
    return 2;
  }
  struct work w[THREADS];
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) {
    w[i].index = i;
    w[i].n = n;
    w[i].x = malloc(sizeof(double) * (size_t)n * CALLS);
    w[i].info = malloc(sizeof(lapack_int) * CALLS);
    if (!w[i].x || !w[i].info) {
      perror("malloc");
      return 1;
    }
  }
  for (int i = 0; i < THREADS; i++) {
    if (pthread_create(&t[i], NULL, solve, &w[i]) != 0) {
      perror("pthread_create");
      return 1;
    }
  }
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);

  FILE *out = fopen(argv[2], "wb");
  if (!out) {
    perror(argv[2]);
    return 1;
  }
  for (int i = 0; i < THREADS; i++) {
    fwrite(w[i].info, sizeof(lapack_int), CALLS, out);
    fwrite(w[i].x, sizeof(double), (size_t)n * CALLS, out);
    free(w[i].x);
    free(w[i].info);
  }
  if (fclose(out) != 0) {
    perror("fclose");
    return 1;
  }
  printf("threads_program: %d threads x %d dgesv of n = %d\n", THREADS, CALLS, n);
  return 0;
}
