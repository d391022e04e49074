/*
 * bench_util.h - what every benchmark program shares: a monotonic clock,
 * medians, the list of transfer sizes with their loop counts, and the raw
 * TCP ping-pong that is the baseline of every transfer and latency figure.
 *
 * Every program prints one machine-readable line per measurement,
 * `what key=value key=value ...`, which bench/run.sh turns into tables.
 * Throughput is per direction in MB/s (10^6 bytes): size / (rtt / 2).
 */
#ifndef NINF_BENCH_UTIL_H
#define NINF_BENCH_UTIL_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds on the monotonic clock. */
double bench_now(void);

/* Median of v[0..n-1] (sorts v in place); n >= 1. */
double bench_median(double *v, int n);

/*
 * The q-quantile (0 < q <= 1) of v[0..n-1] by nearest rank: the smallest
 * value with at least q * n values at or below it, so p99 of 100 samples is
 * the 99th and never an interpolation. Sorts v in place; n >= 1.
 */
double bench_percentile(double *v, int n, double q);

/* Transfer sizes: 1 KiB, 4 KiB, ... up to max_size. Returns the count. */
int bench_sizes(size_t max_size, size_t *sizes, int capacity);

/*
 * Loop count for one size: enough round trips to move about 256 MiB each
 * way, at least 5 and at most max_iters. Warm-up runs: a tenth, at least 1.
 */
int bench_iterations(size_t size, int max_iters);
int bench_warmups(int iterations);

/*
 * "addr:count,..." into out[size]: where the calls of this thread's last
 * transaction block ran (Ninf_transaction_call_info), each server once.
 * In bench_blocks.c (library bench_blocks: it needs libninf).
 */
void bench_block_servers(char *out, size_t size);

/* Parses a size like 1048576, 64K, 16M or 1G; 0 on a malformed string. */
size_t bench_parse_size(const char *text);

/*
 * Parses the transfer programs' options, --max-size SIZE (>= 1 KiB) and
 * --max-iters N (>= 1), over the defaults already in *max_size and
 * *max_iters. Returns 0, or -1 on anything else or a bad value.
 */
int bench_parse_transfer_options(int argc, char **argv, size_t *max_size, int *max_iters);

/*
 * The raw baseline: a child process that, for each request header
 * {size, count}, reads `size` bytes and writes them back, `count` times,
 * over one TCP loopback connection with TCP_NODELAY on both ends.
 */
typedef struct {
  int fd;
  pid_t child;
} PingPong;

/* Forks the echo child and connects to it. Returns 0, or -1 (perror'd). */
int pingpong_start(PingPong *pp);

/* The same with the echo child pinned to `cpu` (-1: not pinned). */
int pingpong_start_on(PingPong *pp, int cpu);

/* The same over a Unix-domain socket pair (the same-host path's baseline). */
int pingpong_start_unix(PingPong *pp);

/* Pins the calling thread (and what it forks later) to `cpu`; 0 or -1. */
int bench_pin(int cpu);

/*
 * Does warmups + iters round trips of `size` bytes from buf (which must
 * hold size bytes) and stores the iters measured round-trip times, in
 * seconds, in times. Returns 0, or -1 (perror'd).
 */
int pingpong_run(PingPong *pp, void *buf, size_t size, int warmups, int iters, double *times);

/* Tells the child to exit and reaps it. */
void pingpong_stop(PingPong *pp);

/*
 * Median round-trip time in seconds of `iters` 8-byte round trips over a
 * fresh ping-pong pair; negative on error.
 */
double pingpong_latency(int iters);
/* The same over a Unix-domain socket pair. */
double pingpong_latency_unix(int iters);

/* A Linpack problem: a random column-major n x n matrix a0 in [-0.5, 0.5)
 * and b0 = a0 * ones, so the solution is all ones; a, b and ipiv are the
 * solve's working copies. `seed` picks the matrix (the same seed, the same
 * matrix). Returns -1 when memory runs out (free it with
 * bench_problem_free all the same). */
typedef struct {
  int n;
  double *a0, *a, *b0, *b;
  int *ipiv;
} BenchProblem;

int bench_problem_init(BenchProblem *p, int n, unsigned long long seed);
void bench_problem_free(BenchProblem *p);

#ifdef __cplusplus
}
#endif

#endif /* NINF_BENCH_UTIL_H */
