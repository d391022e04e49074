/*
 * bench_soak.c - many clients at once for a long run, every result byte
 * checked; and a lone "good client" whose latency shows what an attack on
 * the daemon costs a well-behaved caller.
 *
 *     bench_soak [-server host] [-port n] [--mode soak|good] [--threads N]
 *                [--calls N] [--max-seconds S] [--mix]
 *
 * The server is NINF_SERVER (or -server/-port).
 *
 * soak (default): --threads (64) threads share --calls (20480) calls of
 * `echo` (IN long n, INOUT double a[n]). Each thread alternates one-shot
 * calls (Ninf_call: a connection and an executable per call) with calls on
 * the function handle it keeps (grpc_call: one persistent executable). Sizes
 * follow a fixed cycle from 8 B to 1 MiB, weighted towards small calls so
 * that the run measures the system and not only loopback bandwidth; each
 * thread starts at a different place in it. The input of every call is a
 * pattern of (thread, call, word), so a result from another call or thread
 * cannot pass the check; every returned byte is compared. --mix makes the
 * threads cycle through four kinds of call instead of two: one-shot, handle,
 * async (Ninf_call_async, then Ninf_wait) and two-phase (Ninf_call_submit,
 * the buffer cleared, then Ninf_call_collect). Prints
 *   soak threads=.. calls=.. seconds=.. calls_per_s=.. mb_per_s=.. p50_ms=..
 *        p99_ms=.. max_ms=.. oneshot_p99_ms=.. handle_p99_ms=.. [async_p99_ms=..
 *        two_phase_p99_ms=..] lost=.. wrong=..
 * lost = calls that returned an error, wrong = calls whose result differed.
 * Latencies are of every call, failed ones included.
 *
 * good: one thread, --calls (500) sequential one-shot 8-byte echo calls,
 * each checked, stopping early once --max-seconds (0: no limit) have passed
 * (the call under way is finished). Prints
 *   good calls=.. seconds=.. p50_ms=.. p99_ms=.. max_ms=.. lost=.. wrong=..
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "client/grpc.h"
#include "client/ninf.h"

/* Bytes per call, cycled: 16 entries, 1 MiB once, so a cycle moves ~1.6 MB
 * each way and most calls are small enough to stress the per-call path. */
static const size_t kSizes[] = {8,    64, 8,     1024, 16384,    8,    64, 262144,
                                1024, 8,  16384, 64,   1u << 20, 1024, 8,  262144};
enum { kCycle = sizeof kSizes / sizeof kSizes[0], kMaxReported = 5 };

/* Calls are pattern-checked 64-bit words; this mixes (thread, call, word)
 * into one value (splitmix64's finaliser), so neighbours differ in every byte. */
static uint64_t pattern(uint64_t seed, uint64_t word) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * (word + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint64_t call_seed(int thread, int call) {
  return ((uint64_t)(unsigned)thread << 32) | (uint64_t)(unsigned)call;
}

static void fill(uint64_t *buf, size_t words, uint64_t seed) {
  for (size_t i = 0; i < words; i++) buf[i] = pattern(seed, i);
}

/* 1 when every word came back as it was sent. */
static int check(const uint64_t *buf, size_t words, uint64_t seed) {
  for (size_t i = 0; i < words; i++)
    if (buf[i] != pattern(seed, i)) return 0;
  return 1;
}

/* What the threads share: failures are rare, so one lock for their report
 * costs nothing, and only the first few are printed. */
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static int reported;

static void report_failure(int thread, int call, size_t bytes, const char *how, const char *what) {
  pthread_mutex_lock(&report_lock);
  if (reported++ < kMaxReported)
    fprintf(stderr, "bench_soak: thread %d call %d (%zu B, %s): %s\n", thread, call, bytes, how,
            what);
  pthread_mutex_unlock(&report_lock);
}

typedef struct {
  int index;
  int calls;       /* this thread's share */
  double *latency; /* [calls], seconds */
  uint64_t *buf;   /* 1 MiB */
  int lost, wrong;
  double bytes; /* moved each way by calls that succeeded */
} Worker;

/* The kinds of call, in the order the threads cycle through them: the first
 * two without --mix, all four with it. */
enum { kOneShot, kHandle, kAsync, kTwoPhase };
static const char *const kKindNames[] = {"one-shot", "handle", "async", "two-phase"};
static int kinds = 2;

/* One call of `echo` of the kind its number says; 0 when it succeeded. */
static int echo_call(int kind, grpc_function_handle_t *h, size_t words, uint64_t *buf) {
  switch (kind) {
    case kOneShot:
      return Ninf_call("echo", (long)words, (double *)buf) != 0;
    case kHandle:
      return grpc_call(h, (long)words, (double *)buf) != GRPC_NO_ERROR;
    case kAsync: {
      int id = Ninf_call_async("echo", (long)words, (double *)buf);
      return id < 0 || Ninf_wait(id) != 0;
    }
    default: {
      Ninf_ticket ticket;
      if (Ninf_call_submit(&ticket, "echo", (long)words, (double *)buf) != 0) return 1;
      memset(buf, 0, words * sizeof *buf); /* what comes back must come from the server */
      return Ninf_call_collect(&ticket, "echo", (long)words, (double *)buf) != 0;
    }
  }
}

/* One call; its latency in w->latency. */
static void soak_call(Worker *w, grpc_function_handle_t *h, int call) {
  size_t bytes = kSizes[(call + w->index) % kCycle];
  size_t words = bytes / sizeof(uint64_t);
  uint64_t seed = call_seed(w->index, call);
  const int kind = call % kinds;
  fill(w->buf, words, seed);
  double start = bench_now();
  int failed = echo_call(kind, h, words, w->buf);
  w->latency[call] = bench_now() - start;
  const char *how = kKindNames[kind];
  if (failed) {
    w->lost++;
    report_failure(w->index, call, bytes, how, Ninf_get_error_detail());
  } else if (!check(w->buf, words, seed)) {
    w->wrong++;
    report_failure(w->index, call, bytes, how, "result differs from the input");
  } else {
    w->bytes += (double)bytes;
  }
}

static void *soak_thread(void *arg) {
  Worker *w = arg;
  grpc_function_handle_t h;
  grpc_error_t e = grpc_function_handle_default(&h, "echo");
  if (e != GRPC_NO_ERROR) {
    /* Without a handle every call counts as lost: the run goes on. */
    report_failure(w->index, -1, 0, "handle", grpc_error_string(e));
    w->lost = w->calls;
    return NULL;
  }
  for (int call = 0; call < w->calls; call++) soak_call(w, &h, call);
  grpc_function_handle_destruct(&h);
  return NULL;
}

/* p99 of the calls of one kind, in ms. */
static double kind_p99_ms(const Worker *workers, int threads, int kind, double *scratch) {
  int n = 0;
  for (int t = 0; t < threads; t++)
    for (int c = kind; c < workers[t].calls; c += kinds) scratch[n++] = workers[t].latency[c];
  return n > 0 ? 1e3 * bench_percentile(scratch, n, 0.99) : 0;
}

static void soak_report(const Worker *workers, int threads, int total, double seconds) {
  double *all = malloc((size_t)total * sizeof *all);
  if (!all) return;
  int lost = 0, wrong = 0, n = 0;
  double bytes = 0;
  for (int t = 0; t < threads; t++) {
    lost += workers[t].lost;
    wrong += workers[t].wrong;
    bytes += workers[t].bytes;
  }
  double oneshot_p99 = kind_p99_ms(workers, threads, kOneShot, all);
  double handle_p99 = kind_p99_ms(workers, threads, kHandle, all);
  char mixed[96] = "";
  if (kinds > 2)
    snprintf(mixed, sizeof mixed, " async_p99_ms=%.3f two_phase_p99_ms=%.3f",
             kind_p99_ms(workers, threads, kAsync, all),
             kind_p99_ms(workers, threads, kTwoPhase, all));
  for (int t = 0; t < threads; t++)
    for (int c = 0; c < workers[t].calls; c++) all[n++] = workers[t].latency[c];
  double p50 = bench_percentile(all, n, 0.50), p99 = bench_percentile(all, n, 0.99);
  printf(
      "soak threads=%d calls=%d seconds=%.2f calls_per_s=%.1f mb_per_s=%.1f p50_ms=%.3f "
      "p99_ms=%.3f max_ms=%.3f oneshot_p99_ms=%.3f handle_p99_ms=%.3f%s lost=%d wrong=%d\n",
      threads, total, seconds, total / seconds, bytes / seconds / 1e6, p50 * 1e3, p99 * 1e3,
      all[n - 1] * 1e3, oneshot_p99, handle_p99, mixed, lost, wrong);
  free(all);
}

static int run_soak(int threads, int total) {
  Worker *workers = calloc((size_t)threads, sizeof *workers);
  pthread_t *ids = calloc((size_t)threads, sizeof *ids);
  if (!workers || !ids) return 1;
  for (int t = 0; t < threads; t++) {
    workers[t].index = t;
    workers[t].calls = total / threads + (t < total % threads);
    workers[t].latency = calloc((size_t)workers[t].calls + 1, sizeof(double));
    workers[t].buf = aligned_alloc(64, 1u << 20);
    if (!workers[t].latency || !workers[t].buf) return 1;
  }
  double start = bench_now();
  for (int t = 0; t < threads; t++) {
    if (pthread_create(&ids[t], NULL, soak_thread, &workers[t]) != 0) {
      fprintf(stderr, "bench_soak: cannot start thread %d\n", t);
      return 1;
    }
  }
  for (int t = 0; t < threads; t++) pthread_join(ids[t], NULL);
  soak_report(workers, threads, total, bench_now() - start);
  for (int t = 0; t < threads; t++) {
    free(workers[t].latency);
    free(workers[t].buf);
  }
  free(workers);
  free(ids);
  return 0;
}

/* The good client: sequential small calls, as a user at a terminal makes. */
static int run_good(int calls, double max_seconds) {
  double *times = malloc((size_t)calls * sizeof *times);
  if (!times) return 1;
  int done = 0, lost = 0, wrong = 0;
  double start = bench_now();
  while (done < calls && (max_seconds <= 0 || bench_now() - start < max_seconds)) {
    uint64_t word = pattern(call_seed(-1, done), 0), sent = word;
    double t0 = bench_now();
    int failed = Ninf_call("echo", 1L, (double *)&word) != 0;
    times[done] = bench_now() - t0;
    if (failed) {
      lost++;
      report_failure(0, done, sizeof word, "good", Ninf_get_error_detail());
    } else if (word != sent) {
      wrong++;
      report_failure(0, done, sizeof word, "good", "result differs from the input");
    }
    done++;
  }
  double seconds = bench_now() - start;
  if (done == 0) return 1;
  double p50 = bench_percentile(times, done, 0.50), p99 = bench_percentile(times, done, 0.99);
  printf("good calls=%d seconds=%.2f p50_ms=%.3f p99_ms=%.3f max_ms=%.3f lost=%d wrong=%d\n", done,
         seconds, p50 * 1e3, p99 * 1e3, times[done - 1] * 1e3, lost, wrong);
  free(times);
  return 0;
}

static int usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [-server host] [-port n] [--mode soak|good] [--threads N] [--calls N] "
          "[--max-seconds S] [--mix]\n",
          argv0);
  return 2;
}

int main(int argc, char **argv) {
  if ((argc = Ninf_parse_arg(argc, argv)) < 0) {
    Ninf_perror("bench_soak");
    return 2;
  }
  const char *mode = "soak";
  int threads = 64, calls = -1;
  double max_seconds = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--mode") && i + 1 < argc)
      mode = argv[++i];
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
      calls = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--max-seconds") && i + 1 < argc)
      max_seconds = atof(argv[++i]);
    else if (!strcmp(argv[i], "--mix"))
      kinds = 4;
    else
      return usage(argv[0]);
  }
  int soak = !strcmp(mode, "soak");
  if (calls < 0) calls = soak ? 20480 : 500;
  if ((!soak && strcmp(mode, "good")) || threads < 1 || calls < 1 || (soak && calls < threads) ||
      max_seconds < 0)
    return usage(argv[0]);
  grpc_error_t e = grpc_initialize(NULL);
  if (e != GRPC_NO_ERROR) {
    fprintf(stderr, "bench_soak: grpc_initialize: %s\n", grpc_error_string(e));
    return 1;
  }
  int rc = soak ? run_soak(threads, calls) : run_good(calls, max_seconds);
  grpc_finalize();
  return rc;
}
