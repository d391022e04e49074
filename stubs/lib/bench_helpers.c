/*
 * bench_helpers.c - routines that do (almost) nothing, so that a benchmark
 * of a remote call measures the system and not the routine: `null` is the
 * bare call, `echo` moves an array both ways, `sink` only in, `source` only
 * out. The stubs own the buffers; these functions only see them.
 */
#include "stubs/lib/ninf_stdlib.h"

void ninf_null(void) {}

void echo(long n, double *a) {
  /* INOUT: the array goes back exactly as it came. */
  (void)n;
  (void)a;
}

void sink(long n, const double *a) {
  (void)n;
  (void)a;
}

void source(long n, double *a) {
  for (long i = 0; i < n; i++) a[i] = (double)i;
}
