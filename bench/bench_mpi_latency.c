/*
 * bench_mpi_latency.c - what a call to a routine costs before and after its
 * executable is running: the first call (which starts it: for an MPI
 * routine, mpirun or srun and MPI_Init), then one-shot calls that reuse it,
 * then calls through a GridRPC function handle. bench/mpi.sh runs it for an
 * MPI routine and for its one-process baseline against the same ninfd.
 *
 *     bench_mpi_latency [--calls N] ROUTINE
 *
 * ROUTINE takes no arguments (null, null_mpi). The server is NINF_SERVER,
 * started with --warm-executables 0 so that the first call starts the
 * executable. Prints
 *   mpi_latency routine=R first_ms=.. oneshot_us=.. handle_us=..
 * (one-shot and handle figures are medians of N calls after N/10 warm-ups).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "client/grpc.h"
#include "client/ninf.h"

static int fail(const char *what) {
  fprintf(stderr, "bench_mpi_latency: %s: %s\n", what, Ninf_get_error_detail());
  return 1;
}

/* Median seconds of `calls` one-shot calls of `routine`. */
static int oneshot(const char *routine, int calls, double *times, double *median) {
  for (int i = 0; i < calls / 10 + 1; i++)
    if (Ninf_call(routine) != 0) return fail(routine);
  for (int i = 0; i < calls; i++) {
    double start = bench_now();
    if (Ninf_call(routine) != 0) return fail(routine);
    times[i] = bench_now() - start;
  }
  *median = bench_median(times, calls);
  return 0;
}

/* Median seconds of `calls` calls through one function handle. */
static int handle(const char *routine, int calls, double *times, double *median) {
  grpc_function_handle_t h;
  char *server = getenv("NINF_SERVER");
  if (!server || grpc_function_handle_init(&h, server, (char *)routine) != GRPC_NO_ERROR)
    return fail("grpc_function_handle_init");
  for (int i = 0; i < calls / 10 + 1; i++)
    if (grpc_call(&h) != GRPC_NO_ERROR) return fail("grpc_call");
  for (int i = 0; i < calls; i++) {
    double start = bench_now();
    if (grpc_call(&h) != GRPC_NO_ERROR) return fail("grpc_call");
    times[i] = bench_now() - start;
  }
  *median = bench_median(times, calls);
  return grpc_function_handle_destruct(&h) == GRPC_NO_ERROR ? 0 : fail("destruct");
}

int main(int argc, char **argv) {
  int calls = 1000, i = 1;
  if (argc > 2 && strcmp(argv[1], "--calls") == 0) {
    calls = atoi(argv[2]);
    i = 3;
  }
  if (i + 1 != argc || calls < 1) {
    fprintf(stderr, "usage: %s [--calls N] ROUTINE\n", argv[0]);
    return 2;
  }
  const char *routine = argv[i];
  double *times = malloc((size_t)calls * sizeof *times);
  if (!times || grpc_initialize(NULL) != GRPC_NO_ERROR) return fail("setup");
  double start = bench_now();
  if (Ninf_call(routine) != 0) return fail(routine);
  double first = bench_now() - start, one = 0, hd = 0;
  if (oneshot(routine, calls, times, &one) != 0 || handle(routine, calls, times, &hd) != 0)
    return 1;
  printf("mpi_latency routine=%s first_ms=%.1f oneshot_us=%.1f handle_us=%.1f\n", routine,
         first * 1e3, one * 1e6, hd * 1e6);
  free(times);
  grpc_finalize();
  return 0;
}
