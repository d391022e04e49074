/*
 * ep_demo.c - the NAS EP kernel on a Ninf server, verified, and timed
 * against the same kernel run here.
 *
 *     ep_demo [-server host] [-port n] [m [routine]]
 *
 * m defaults to 24 (class S); routine to "ep", and "ep_mpi" runs the same
 * call as an MPI job on the server (docs/mpi.md). EP is compute-bound with tiny arguments (one long
 * in, 12 doubles out), so the remote time should be the local time plus one call's overhead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ninf.h"
#include "stubs/lib/ninf_stdlib.h"

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

static void print_result(const char *label, long m, double seconds, double sx, double sy,
                         const double q[10]) {
  double pairs = 0;
  for (int l = 0; l < 10; l++) pairs += q[l];
  int verdict = ep_verify(m, sx, sy);
  printf("%-6s m=%ld  %.3f s  %.2f Mpairs/s  sx=%.15e sy=%.15e  gaussian pairs=%.0f  %s\n", label,
         m, seconds, (double)(1L << m) / seconds * 1e-6, sx, sy, pairs, verdict_text(verdict));
}

int main(int argc, char **argv) {
  argc = Ninf_parse_arg(argc, argv);
  long m = argc > 1 ? atol(argv[1]) : 24;
  const char *routine = argc > 2 ? argv[2] : "ep";
  if (argc > 3 || m < 0 || m > 40) {
    fprintf(stderr, "usage: %s [-server host] [-port n] [m (0..40, default 24) [routine (ep)]]\n",
            argv[0]);
    return 2;
  }
  double sx, sy, q[10];
  double start = now();
  /* IN long m: pass a long, as the interface says. */
  if (Ninf_call(routine, m, &sx, &sy, q) != 0) {
    Ninf_perror(routine);
    return 1;
  }
  double remote = now() - start;
  print_result("remote", m, remote, sx, sy, q);
  int status = ep_verify(m, sx, sy) == 0 ? 1 : 0;

  start = now();
  ep(m, &sx, &sy, q);
  double local = now() - start;
  print_result("local", m, local, sx, sy, q);
  if (ep_verify(m, sx, sy) == 0) status = 1;
  printf("remote / local time = %.3f\n", remote / local);
  return status;
}
