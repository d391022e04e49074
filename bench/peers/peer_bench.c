/*
 * peer_bench.c - the measurement loop of peer_bench.h: options, warm-up,
 * timed repeats, checks of every result, and the output lines.
 */
#include "bench/peers/peer_bench.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "bench/bench_util.h"

typedef struct {
  const char *address, *workload;
  size_t size;
  int reps, warmup;
  double start_at, seconds;
} Options;

static int usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s --connect ADDRESS --workload null|echo|dgesv|rate [--size S] [--reps R]\n"
          "       [--warmup W] [--start-at EPOCH] [--seconds S]\n",
          argv0);
  return 2;
}

static int parse(int argc, char **argv, Options *o) {
  static const struct option longs[] = {
      {"connect", required_argument, 0, 'c'}, {"workload", required_argument, 0, 'w'},
      {"size", required_argument, 0, 's'},    {"reps", required_argument, 0, 'r'},
      {"warmup", required_argument, 0, 'u'},  {"start-at", required_argument, 0, 't'},
      {"seconds", required_argument, 0, 'd'}, {0, 0, 0, 0}};
  *o = (Options){.reps = 10, .warmup = 2, .seconds = 1};
  int c;
  while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
    switch (c) {
      case 'c':
        o->address = optarg;
        break;
      case 'w':
        o->workload = optarg;
        break;
      case 's':
        o->size = bench_parse_size(optarg);
        break;
      case 'r':
        o->reps = atoi(optarg);
        break;
      case 'u':
        o->warmup = atoi(optarg);
        break;
      case 't':
        o->start_at = atof(optarg);
        break;
      case 'd':
        o->seconds = atof(optarg);
        break;
      default:
        return -1;
    }
  }
  if (!o->address || !o->workload || o->reps < 1 || o->warmup < 0 || optind != argc) return -1;
  return 0;
}

/* Wall-clock seconds: the one clock that separate processes share. */
static double wall_now(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

static void print_times(const PeerOps *ops, const char *workload, size_t size, double *t, int n) {
  double median = bench_median(t, n); /* sorts t */
  double p90 = bench_percentile(t, n, 0.9);
  printf("peer=%s workload=%s size=%zu median=%.2f min=%.2f p90=%.2f reps=%d unit=us\n", ops->name,
         workload, size, median * 1e6, t[0] * 1e6, p90 * 1e6, n);
  fflush(stdout);
}

/* One timed call of the workload; seconds, or negative on failure. */
typedef double (*TimedCall)(const PeerOps *ops, void *state, size_t size);

static double timed_null(const PeerOps *ops, void *state, size_t size) {
  (void)state, (void)size;
  double start = bench_now();
  if (ops->null_call(ops->ctx) != 0) return -1;
  return bench_now() - start;
}

/*
 * The echo buffer holds a pattern that changes every call (its first word
 * is a counter), so a peer that returned a stale or partial reply fails.
 */
static double timed_echo(const PeerOps *ops, void *state, size_t size) {
  unsigned char *buf = state;
  static unsigned stamp;
  stamp++;
  memcpy(buf, &stamp, sizeof stamp);
  buf[size - 1] = (unsigned char)stamp;
  double start = bench_now();
  if (ops->echo(ops->ctx, buf, size) != 0) return -1;
  double seconds = bench_now() - start;
  unsigned back;
  memcpy(&back, buf, sizeof back);
  if (back != stamp || buf[size - 1] != (unsigned char)stamp ||
      buf[size / 2] != (unsigned char)(size / 2)) {
    fprintf(stderr, "%s: echo of %zu bytes came back different\n", ops->name, size);
    return -1;
  }
  return seconds;
}

/* End to end: from the caller's A and b to x in the caller's b. */
static double timed_dgesv(const PeerOps *ops, void *state, size_t size) {
  BenchProblem *p = state;
  int n = (int)size;
  memcpy(p->b, p->b0, (size_t)n * sizeof(double));
  double start = bench_now();
  if (ops->dgesv(ops->ctx, n, p->a0, p->b) != 0) return -1;
  double seconds = bench_now() - start;
  double worst = 0;
  for (int i = 0; i < n; i++) worst = fmax(worst, fabs(p->b[i] - 1.0));
  if (!(worst < 1e-6)) {
    fprintf(stderr, "%s: dgesv n=%d wrong solution (max error %g)\n", ops->name, n, worst);
    return -1;
  }
  return seconds;
}

static int repeat(const PeerOps *ops, const Options *o, TimedCall call, void *state) {
  double *times = calloc((size_t)o->reps, sizeof *times);
  if (!times) return 1;
  int status = 0;
  for (int i = 0; i < o->warmup + o->reps && status == 0; i++) {
    double t = call(ops, state, o->size);
    if (t < 0) status = 1;
    if (i >= o->warmup) times[i - o->warmup] = t;
  }
  if (status == 0) print_times(ops, o->workload, o->size, times, o->reps);
  free(times);
  return status;
}

static int run_echo(const PeerOps *ops, const Options *o) {
  if (o->size < 8) return usage("echo: --size");
  unsigned char *buf = malloc(o->size);
  if (!buf) return 1;
  for (size_t i = 0; i < o->size; i++) buf[i] = (unsigned char)i; /* touched: no page faults */
  int status = repeat(ops, o, timed_echo, buf);
  free(buf);
  return status;
}

static int run_dgesv(const PeerOps *ops, const Options *o) {
  BenchProblem p = {0};
  int status = 1;
  if (o->size >= 1 && bench_problem_init(&p, (int)o->size, 42) == 0)
    status = repeat(ops, o, timed_dgesv, &p);
  bench_problem_free(&p);
  return status;
}

/*
 * Null calls until the window ends; only those completed inside it count.
 * late=1 says the first call completed after the window opened (the
 * process started too late to count all of it), which the driver reports.
 */
static int run_rate(const PeerOps *ops, const Options *o) {
  double start = o->start_at > 0 ? o->start_at : wall_now() + 0.5, stop = start + o->seconds;
  long calls = 0;
  int late = -1;
  for (;;) {
    if (ops->null_call(ops->ctx) != 0) return 1;
    double now = wall_now();
    if (late < 0) late = now > start;
    if (now >= stop) break;
    if (now >= start) calls++;
  }
  printf("peer=%s workload=rate size=0 calls=%ld seconds=%.3f late=%d unit=calls\n", ops->name,
         calls, o->seconds, late);
  return 0;
}

int peer_main(int argc, char **argv, const PeerOps *ops) {
  Options o;
  if (parse(argc, argv, &o) != 0) return usage(argv[0]);
  if (ops->connect(ops->ctx, o.address) != 0) return 1;
  int status;
  if (strcmp(o.workload, "null") == 0)
    status = repeat(ops, &o, timed_null, NULL);
  else if (strcmp(o.workload, "echo") == 0)
    status = run_echo(ops, &o);
  else if (strcmp(o.workload, "dgesv") == 0)
    status = run_dgesv(ops, &o);
  else if (strcmp(o.workload, "rate") == 0)
    status = run_rate(ops, &o);
  else
    status = usage(argv[0]);
  ops->close(ops->ctx);
  return status;
}
