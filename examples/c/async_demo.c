/*
 * async_demo.c - two NAS EP calls in flight at once with Ninf_call_async,
 * against one synchronous call.
 *
 *     async_demo [-server host] [-port n] [m]      (m defaults to 24)
 *
 * With a server that has two free job slots (two cores), the two calls run
 * side by side and take about as long as one; with one slot they queue and
 * take twice as long. The program prints both times and their ratio.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ninf.h"
#include "stubs/lib/ninf_stdlib.h"

enum { kCalls = 2 };

/* ep_verify's answer in words. */
static const char *verdict_text(int verdict) {
  if (verdict == 1) return "VERIFIED";
  return verdict == 0 ? "FAILED" : "(no reference for this m)";
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
  double sx;
  double sy;
  double q[10];
} EpResult;

int main(int argc, char **argv) {
  argc = Ninf_parse_arg(argc, argv);
  long m = argc > 1 ? atol(argv[1]) : 24;
  if (argc > 2 || m < 0 || m > 40) {
    fprintf(stderr, "usage: %s [-server host] [-port n] [m (0..40, default 24)]\n", argv[0]);
    return 2;
  }

  EpResult one;
  double start = now();
  if (Ninf_call("ep", m, &one.sx, &one.sy, one.q) != 0) {
    Ninf_perror("Ninf_call(ep)");
    return 1;
  }
  double single = now() - start;

  /* The output arrays must stay untouched until the calls are waited for. */
  EpResult results[kCalls];
  start = now();
  for (int i = 0; i < kCalls; i++) {
    if (Ninf_call_async("ep", m, &results[i].sx, &results[i].sy, results[i].q) < 0) {
      Ninf_perror("Ninf_call_async(ep)");
      Ninf_wait_all();
      return 1;
    }
  }
  if (Ninf_wait_all() != 0) {
    Ninf_perror("Ninf_wait_all");
    return 1;
  }
  double both = now() - start;

  int status = 0;
  for (int i = 0; i < kCalls; i++) {
    /* Same m, same deterministic kernel: the results must be identical. */
    int verdict = ep_verify(m, results[i].sx, results[i].sy);
    int same = results[i].sx == one.sx && results[i].sy == one.sy;
    printf("async call %d: sx=%.15e sy=%.15e %s%s\n", i, results[i].sx, results[i].sy,
           verdict_text(verdict), same ? "" : " (differs from the synchronous call!)");
    if (verdict == 0 || !same) status = 1;
  }
  printf("one synchronous call: %.3f s\n", single);
  printf("%d asynchronous calls: %.3f s (%.2f x one call; 1.0 = fully parallel)\n", kCalls, both,
         both / single);
  return status;
}
