/*
 * peer_bench.h - the one measurement loop that every C/C++ client of
 * bench/peers.sh runs, so that Ninf, gRPC and ZeroMQ are timed by the same
 * rules: warm-up calls first, then timed repeats, and one line per workload:
 *
 *     peer=NAME workload=null|echo|dgesv size=S median=US min=US p90=US reps=R unit=us
 *     peer=NAME workload=rate size=0 calls=C seconds=S unit=calls
 *
 * size is bytes for echo (each way) and n for dgesv. A client only supplies
 * its calls (PeerOps); everything about timing and checking lives here.
 *
 * Each call's contract: it returns 0 on success and -1 after printing why.
 * echo sends buf[0..size) and leaves the reply in buf (the caller's own
 * array); dgesv solves A x = b for the column-major n x n matrix a (not
 * modified) and leaves x in b (the caller's own array).
 */
#ifndef NINF_BENCH_PEER_BENCH_H
#define NINF_BENCH_PEER_BENCH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const char *name; /* peer=NAME in every line */
  void *ctx;        /* handed to every call */
  int (*connect)(void *ctx, const char *address);
  int (*null_call)(void *ctx);
  int (*echo)(void *ctx, void *buf, size_t size);
  int (*dgesv)(void *ctx, int n, const double *a, double *b);
  void (*close)(void *ctx);
} PeerOps;

/*
 * Parses the common command line and runs one workload:
 *
 *   --connect ADDRESS   the server (its form is the peer's own)
 *   --workload W        null, echo, dgesv or rate
 *   --size S            echo bytes (64K, 16M ...) or dgesv n
 *   --reps R --warmup W timed and untimed calls (null/echo/dgesv)
 *   --start-at T --seconds S   rate: null calls counted in the wall-clock
 *                       window [T, T+S) (epoch seconds), calls before T are
 *                       warm-up, so that separate processes count together
 *
 * Returns the exit status (0, 1 on a failed call, 2 on a bad command line).
 */
int peer_main(int argc, char **argv, const PeerOps *ops);

#ifdef __cplusplus
}
#endif

#endif /* NINF_BENCH_PEER_BENCH_H */
