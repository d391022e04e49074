/*
 * bench_handle.c - calls through a GridRPC function handle (one persistent
 * executable, no fork-exec per call) against the raw TCP ping-pong,
 * measured in the same run with the same CPU placement.
 *
 *     bench_handle --placement same|cross [--max-size SIZE] [--iters N]
 *
 * The server is NINF_SERVER. This program pins itself to CPU 0; the raw
 * echo child goes to CPU 0 (same) or CPU 1 (cross), and bench/run.sh starts
 * the ninfd of each placement under taskset the same way, so both sides of
 * every comparison run with the same placement: on these 2-vCPU machines a
 * raw 8-byte round trip costs ~13 us on one vCPU and ~70 us across two.
 * Prints
 *   handle_latency placement=P null_us=.. raw_rtt_us=.. ratio=..
 *   handle_transfer placement=P size=.. raw_mbps=.. echo_mbps=.. ratio=..
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "client/grpc.h"

enum { kMaxSizes = 32 };

static int fail(const char *what, grpc_error_t e) {
  fprintf(stderr, "bench_handle: %s: %s: %s\n", what, grpc_error_string(e),
          Ninf_get_error_detail());
  return 1;
}

static int latency(const char *placement, grpc_function_handle_t *null_h, PingPong *pp, int iters) {
  double *times = malloc((size_t)iters * sizeof *times);
  char word[8] = {0};
  if (!times || pingpong_run(pp, word, sizeof word, bench_warmups(iters), iters, times) != 0)
    return 1;
  double raw = bench_median(times, iters);
  for (int i = 0; i < bench_warmups(iters); i++)
    if (grpc_call(null_h) != GRPC_NO_ERROR) return fail("null", grpc_call(null_h));
  for (int i = 0; i < iters; i++) {
    double start = bench_now();
    grpc_error_t e = grpc_call(null_h);
    if (e != GRPC_NO_ERROR) return fail("null", e);
    times[i] = bench_now() - start;
  }
  double null_rtt = bench_median(times, iters);
  printf("handle_latency placement=%s null_us=%.1f raw_rtt_us=%.1f ratio=%.2f\n", placement,
         null_rtt * 1e6, raw * 1e6, null_rtt / raw);
  free(times);
  return 0;
}

static int transfer(const char *placement, grpc_function_handle_t *echo_h, PingPong *pp,
                    size_t max_size) {
  size_t sizes[kMaxSizes];
  int count = bench_sizes(max_size, sizes, kMaxSizes);
  char *buf = malloc(max_size);
  double *times = malloc(4096 * sizeof *times);
  if (!buf || !times) return 1;
  memset(buf, 1, max_size); /* warm: no first-touch cost on either side's client */
  for (int s = 0; s < count; s++) {
    size_t size = sizes[s];
    int iters = bench_iterations(size, 4096), warm = bench_warmups(iters);
    if (pingpong_run(pp, buf, size, warm, iters, times) != 0) return 1;
    double raw = bench_median(times, iters);
    long n = (long)(size / sizeof(double));
    for (int i = 0; i < warm + iters; i++) {
      double start = bench_now();
      grpc_error_t e = grpc_call(echo_h, n, (double *)buf);
      if (e != GRPC_NO_ERROR) return fail("echo", e);
      if (i >= warm) times[i - warm] = bench_now() - start;
    }
    double echo = bench_median(times, iters);
    double raw_mbps = size / (raw / 2) / 1e6, echo_mbps = size / (echo / 2) / 1e6;
    printf("handle_transfer placement=%s size=%zu raw_mbps=%.1f echo_mbps=%.1f ratio=%.3f\n",
           placement, size, raw_mbps, echo_mbps, echo_mbps / raw_mbps);
    fflush(stdout);
  }
  free(buf);
  free(times);
  return 0;
}

int main(int argc, char **argv) {
  const char *placement = NULL;
  size_t max_size = 256u << 20;
  int iters = 2000;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--placement") && i + 1 < argc)
      placement = argv[++i];
    else if (!strcmp(argv[i], "--max-size") && i + 1 < argc)
      max_size = bench_parse_size(argv[++i]);
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
      iters = atoi(argv[++i]);
    else
      placement = NULL, i = argc;
  }
  if (!placement || (strcmp(placement, "same") && strcmp(placement, "cross")) || max_size < 1024 ||
      iters < 1) {
    fprintf(stderr, "usage: bench_handle --placement same|cross [--max-size SIZE] [--iters N]\n");
    return 2;
  }
  if (bench_pin(0) != 0) return 1;
  PingPong pp;
  if (pingpong_start_on(&pp, strcmp(placement, "same") ? 1 : 0) != 0) return 1;
  grpc_error_t e = grpc_initialize(NULL);
  if (e != GRPC_NO_ERROR) return fail("grpc_initialize", e);
  grpc_function_handle_t null_h, echo_h;
  if ((e = grpc_function_handle_default(&null_h, "null")) != GRPC_NO_ERROR)
    return fail("handle null", e);
  if ((e = grpc_function_handle_default(&echo_h, "echo")) != GRPC_NO_ERROR)
    return fail("handle echo", e);
  int rc = latency(placement, &null_h, &pp, iters) || transfer(placement, &echo_h, &pp, max_size);
  pingpong_stop(&pp);
  grpc_function_handle_destruct(&null_h);
  grpc_function_handle_destruct(&echo_h);
  grpc_finalize();
  return rc;
}
