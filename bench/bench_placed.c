/*
 * bench_placed.c - timed calls of dgesv or NAS EP, one line per call: the
 * client of the multi-site placement benchmark (bench/meta_sites.sh).
 *
 *     bench_placed [--calls K] [--threads T] [--name NAME] dgesv N
 *     bench_placed [--calls K] [--threads T] [--name NAME] ep M
 *
 * Makes K calls (default 5; 0: until killed, which is how meta_sites.sh
 * keeps a server busy) of the routine called NAME, by default the bare
 * routine name, which goes to NINF_METASERVER's placement (or NINF_SERVER);
 * "ninf://host:port/ep" goes straight to that server. T threads (default 1)
 * each make their share of the K calls one after another, with Ninf_call
 * (thread-safe), so every call has its own wall time. For each call:
 *
 *     call i=I thread=T fn=dgesv size=N seconds=S
 *
 * dgesv solves the same random n x n system with b = A * ones every time
 * (the solution must be all ones); EP's sums must equal the first call's.
 * The exit status is non-zero if a call fails or returns a wrong result.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "client/ninf.h"

enum { kMaxThreads = 64 };

typedef struct {
  int dgesv;        /* 1: dgesv, 0: ep */
  const char *name; /* what Ninf_call is given */
  int size;         /* n for dgesv, m for ep */
  int calls;        /* 0: until killed */
  int threads;
  double *a0, *b0;       /* dgesv's system, read-only, shared */
  pthread_mutex_t mutex; /* the EP reference and the output */
  int have_reference;
  double ref_sx, ref_sy;
  atomic_int failed; /* a call failed: every thread stops */
} Bench;

typedef struct {
  Bench *bench;
  int thread;
} Worker;

/* A random column-major matrix and b = A * ones (bench_dgesv's generator). */
static int make_system(Bench *b) {
  int n = b->size;
  size_t nn = (size_t)n * n;
  b->a0 = malloc(nn * sizeof(double));
  b->b0 = calloc((size_t)n, sizeof(double));
  if (!b->a0 || !b->b0) return -1;
  unsigned long long state = 7;
  for (size_t i = 0; i < nn; i++) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    b->a0[i] = (double)(state >> 11) / 9007199254740992.0 - 0.5;
    b->b0[i % (size_t)n] += b->a0[i];
  }
  return 0;
}

/* One dgesv call from fresh copies; its seconds, or -1 on failure. */
static double call_dgesv(Bench *b, double *a, double *x, int *ipiv) {
  int n = b->size, nrhs = 1, info = 0;
  memcpy(a, b->a0, (size_t)n * n * sizeof(double));
  memcpy(x, b->b0, (size_t)n * sizeof(double));
  double start = bench_now();
  if (Ninf_call(b->name, n, nrhs, a, n, ipiv, x, n, &info) != 0) {
    Ninf_perror("bench_placed: Ninf_call(dgesv)");
    return -1;
  }
  double seconds = bench_now() - start;
  double worst = 0;
  for (int i = 0; i < n; i++) worst = fmax(worst, fabs(x[i] - 1.0));
  if (info != 0 || !(worst < 1e-6)) {
    fprintf(stderr, "bench_placed: dgesv n=%d wrong solution (info %d, max error %g)\n", n, info,
            worst);
    return -1;
  }
  return seconds;
}

/* One EP call; its seconds, or -1 on failure or sums unlike the first call's. */
static double call_ep(Bench *b) {
  long m = b->size; /* IN long m: pass a long, as the interface says */
  double sx, sy, q[10];
  double start = bench_now();
  if (Ninf_call(b->name, m, &sx, &sy, q) != 0) {
    Ninf_perror("bench_placed: Ninf_call(ep)");
    return -1;
  }
  double seconds = bench_now() - start;
  pthread_mutex_lock(&b->mutex);
  if (!b->have_reference) {
    b->have_reference = 1;
    b->ref_sx = sx;
    b->ref_sy = sy;
  }
  int same = sx == b->ref_sx && sy == b->ref_sy;
  pthread_mutex_unlock(&b->mutex);
  if (!same) {
    fprintf(stderr, "bench_placed: ep m=%ld sums differ from the first call's\n", m);
    return -1;
  }
  return seconds;
}

/* Calls thread, thread + T, thread + 2T, ... below K (all of them when K = 0). */
static void *worker(void *arg) {
  Worker *w = arg;
  Bench *b = w->bench;
  const int dgesv = b->dgesv;
  double *a = NULL, *x = NULL;
  int *ipiv = NULL;
  if (dgesv) {
    a = malloc((size_t)b->size * b->size * sizeof(double));
    x = malloc((size_t)b->size * sizeof(double));
    ipiv = malloc((size_t)b->size * sizeof(int));
    if (!a || !x || !ipiv) {
      fprintf(stderr, "bench_placed: out of memory for n=%d\n", b->size);
      b->failed = 1;
    }
  }
  for (long i = w->thread; !b->failed && (b->calls == 0 || i < b->calls); i += b->threads) {
    double seconds = dgesv ? call_dgesv(b, a, x, ipiv) : call_ep(b);
    pthread_mutex_lock(&b->mutex);
    if (seconds < 0) {
      b->failed = 1;
    } else {
      printf("call i=%ld thread=%d fn=%s size=%d seconds=%.6f\n", i, w->thread,
             dgesv ? "dgesv" : "ep", b->size, seconds);
      fflush(stdout);
    }
    pthread_mutex_unlock(&b->mutex);
  }
  free(a);
  free(x);
  free(ipiv);
  return NULL;
}

static int usage(const char *program) {
  fprintf(stderr, "usage: %s [--calls K] [--threads T] [--name NAME] dgesv N | ep M\n", program);
  return 2;
}

int main(int argc, char **argv) {
  Bench b;
  memset(&b, 0, sizeof b);
  b.calls = 5;
  b.threads = 1;
  int i = 1;
  for (; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
    if (strcmp(argv[i], "--calls") == 0) {
      b.calls = atoi(argv[i + 1]);
    } else if (strcmp(argv[i], "--threads") == 0) {
      b.threads = atoi(argv[i + 1]);
    } else if (strcmp(argv[i], "--name") == 0) {
      b.name = argv[i + 1];
    } else {
      return usage(argv[0]);
    }
  }
  if (i + 2 != argc || b.calls < 0 || b.threads < 1 || b.threads > kMaxThreads)
    return usage(argv[0]);
  b.dgesv = strcmp(argv[i], "dgesv") == 0;
  if (!b.dgesv && strcmp(argv[i], "ep") != 0) return usage(argv[0]);
  b.size = atoi(argv[i + 1]);
  if (b.dgesv ? (b.size < 1 || b.size > 46340) : (b.size < 0 || b.size > 40)) return usage(argv[0]);
  if (b.name == NULL) b.name = argv[i];
  if (b.dgesv && make_system(&b) != 0) {
    fprintf(stderr, "bench_placed: out of memory for n=%d\n", b.size);
    return 1;
  }
  pthread_mutex_init(&b.mutex, NULL);
  pthread_t tids[kMaxThreads];
  Worker workers[kMaxThreads];
  int started = 0;
  for (int t = 0; t < b.threads; t++) {
    workers[t].bench = &b;
    workers[t].thread = t;
    if (pthread_create(&tids[t], NULL, worker, &workers[t]) != 0) {
      fprintf(stderr, "bench_placed: cannot start thread %d\n", t);
      b.failed = 1;
      break;
    }
    started++;
  }
  for (int t = 0; t < started; t++) pthread_join(tids[t], NULL);
  pthread_mutex_destroy(&b.mutex);
  free(b.a0);
  free(b.b0);
  return b.failed ? 1 : 0;
}
