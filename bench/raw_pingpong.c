/*
 * raw_pingpong.c - the raw TCP baseline: loopback ping-pong with no RPC at
 * all, measured the way the Ninf benchmarks measure their calls.
 *
 *     raw_pingpong [--unix] [--max-size SIZE] [--max-iters N]
 *
 * --unix: over a Unix-domain socket pair instead of loopback TCP (the
 * baseline of ninfd's same-host path), the latency line too.
 *
 * For each size from 1 KiB to SIZE (default 256M) in powers of 4 it prints
 *     raw size=BYTES iters=N rtt_us=MEDIAN mb_s=PER_DIRECTION
 * and at the end the small-message latency
 *     raw_latency size=8 iters=N rtt_us=MEDIAN
 * The echo side is a child process with a warm buffer; both ends use
 * TCP_NODELAY; each size gets warm-up round trips before the timed ones.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"

enum { kMaxSizes = 16, kLatencyIters = 20000 };

static int usage(const char *argv0) {
  fprintf(stderr, "usage: %s [--unix] [--max-size SIZE (e.g. 16M, default 256M)] [--max-iters N]\n",
          argv0);
  return 2;
}

/* One line per size, then the latency line; returns the exit status. */
static int run(char *buf, double *times, size_t max_size, int max_iters, int over_unix) {
  size_t sizes[kMaxSizes];
  int count = bench_sizes(max_size, sizes, kMaxSizes);
  memset(buf, 1, max_size); /* warm: first-touch page faults are not the link */
  PingPong pp;
  if ((over_unix ? pingpong_start_unix(&pp) : pingpong_start(&pp)) != 0) return 1;
  int status = 0;
  for (int s = 0; s < count && status == 0; s++) {
    int iters = bench_iterations(sizes[s], max_iters);
    status = pingpong_run(&pp, buf, sizes[s], bench_warmups(iters), iters, times) == 0 ? 0 : 1;
    if (status == 0) {
      double rtt = bench_median(times, iters);
      printf("raw size=%zu iters=%d rtt_us=%.2f mb_s=%.1f\n", sizes[s], iters, rtt * 1e6,
             (double)sizes[s] / (rtt / 2) * 1e-6);
      fflush(stdout);
    }
  }
  pingpong_stop(&pp);
  if (status != 0) return status;
  double rtt = over_unix ? pingpong_latency_unix(kLatencyIters) : pingpong_latency(kLatencyIters);
  if (rtt < 0) return 1;
  printf("raw_latency size=8 iters=%d rtt_us=%.2f\n", kLatencyIters, rtt * 1e6);
  return 0;
}

int main(int argc, char **argv) {
  size_t max_size = (size_t)256 << 20;
  int max_iters = 2000;
  int over_unix = argc > 1 && strcmp(argv[1], "--unix") == 0;
  if (over_unix) { /* the remaining options as usual */
    argv[1] = argv[0];
    argv++;
    argc--;
  }
  if (bench_parse_transfer_options(argc, argv, &max_size, &max_iters) != 0) return usage(argv[0]);
  char *buf = malloc(max_size);
  double *times = malloc((size_t)max_iters * sizeof *times);
  int status = 1;
  if (buf == NULL || times == NULL)
    fprintf(stderr, "raw_pingpong: out of memory\n");
  else
    status = run(buf, times, max_size, max_iters, over_unix);
  free(buf);
  free(times);
  return status;
}
