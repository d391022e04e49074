/*
 * bench_transfer.c - array throughput of a remote call, against the raw TCP
 * figures of raw_pingpong (run it right before, in the same session).
 *
 *     bench_transfer [--max-size SIZE] [--max-iters N]
 *
 * For each size from 1 KiB to SIZE (default 256M) in powers of 4 it calls
 * Ninf_call("echo", n, a) with n = size / 8 doubles (INOUT: the array goes to
 * the server and comes back) on the server in NINF_SERVER and prints
 *     transfer size=BYTES iters=N call_us=MEDIAN mb_s=PER_DIRECTION
 * with the per-direction throughput computed as raw_pingpong does:
 * size / (call time / 2). Every call is a whole one-shot call (connection,
 * executable start, both transfers), which is what a user's call costs.
 * To tell that fixed cost from the transfer itself it first prints
 *     transfer_null iters=N call_us=MEDIAN
 * for Ninf_call("null"), and each transfer line also carries
 * bulk_mb_s = size / ((call time - null call time) / 2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "client/ninf.h"

enum { kMaxSizes = 16 };

static int usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [-server host] [-port n] [--max-size SIZE (default 256M)] [--max-iters N]\n",
          argv0);
  return 2;
}

/*
 * Median seconds per echo call of `size` bytes, or per null call when a is
 * NULL; negative on error.
 */
static double measure(double *a, size_t size, int iters, double *times) {
  long n = (long)(size / sizeof(double));
  for (int i = 0; i < bench_warmups(iters) + iters; i++) {
    double start = bench_now();
    int rc = a != NULL ? Ninf_call("echo", n, a) : Ninf_call("null");
    if (rc != 0) {
      Ninf_perror(a != NULL ? "Ninf_call(echo)" : "Ninf_call(null)");
      return -1;
    }
    if (i >= bench_warmups(iters)) times[i - bench_warmups(iters)] = bench_now() - start;
  }
  return bench_median(times, iters);
}

/* echo must hand back exactly what it was given. */
static int check_echo(const double *a, size_t count) {
  for (size_t i = 0; i < count; i++) {
    if (a[i] != (double)i) {
      fprintf(stderr, "bench_transfer: echo changed a[%zu]\n", i);
      return -1;
    }
  }
  return 0;
}

/* The null baseline, then one line per size; returns the exit status. */
static int run(double *a, double *times, size_t max_size, int max_iters) {
  size_t sizes[kMaxSizes];
  int count = bench_sizes(max_size, sizes, kMaxSizes);
  /* Warm and recognizable: a[i] = i, checked after each size. */
  for (size_t i = 0; i < max_size / sizeof *a; i++) a[i] = (double)i;
  int null_iters = bench_iterations(1024, max_iters);
  double null_call = measure(NULL, 0, null_iters, times);
  if (null_call < 0) return 1;
  printf("transfer_null iters=%d call_us=%.2f\n", null_iters, null_call * 1e6);
  for (int s = 0; s < count; s++) {
    int iters = bench_iterations(sizes[s], max_iters);
    double t = measure(a, sizes[s], iters, times);
    if (t < 0 || check_echo(a, sizes[s] / sizeof *a) != 0) return 1;
    /* Noise can make a tiny transfer look cheaper than null: no figure then. */
    double bulk = t > null_call ? (double)sizes[s] / ((t - null_call) / 2) * 1e-6 : 0;
    printf("transfer size=%zu iters=%d call_us=%.2f mb_s=%.1f bulk_mb_s=%.1f\n", sizes[s], iters,
           t * 1e6, (double)sizes[s] / (t / 2) * 1e-6, bulk);
    fflush(stdout);
  }
  return 0;
}

int main(int argc, char **argv) {
  argc = Ninf_parse_arg(argc, argv);
  size_t max_size = (size_t)256 << 20;
  int max_iters = 200; /* each call starts an executable: ~ms, not us */
  if (bench_parse_transfer_options(argc, argv, &max_size, &max_iters) != 0) return usage(argv[0]);
  double *a = malloc(max_size);
  double *times = malloc((size_t)max_iters * sizeof *times);
  int status = 1;
  if (a == NULL || times == NULL)
    fprintf(stderr, "bench_transfer: out of memory\n");
  else
    status = run(a, times, max_size, max_iters);
  free(a);
  free(times);
  return status;
}
