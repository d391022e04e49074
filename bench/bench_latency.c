/*
 * bench_latency.c - the cost of a bare remote call, against what it cannot
 * avoid: starting an executable and one TCP round trip.
 *
 *     bench_latency [-server host] [-port n] [--registry DIR] [--iters N]
 *
 * Measures, each as a median of N runs after warm-ups:
 *   null_us     Ninf_call("null") on the server in NINF_SERVER, one-shot;
 *   spawn_us    posix_spawn + waitpid of the registry's `null` executable
 *               with --noop (what ninfd pays to start one);
 *   raw_rtt_us  an 8-byte TCP round trip over loopback;
 * and prints
 *   latency null_us=.. spawn_us=.. raw_rtt_us=.. ratio=null/(spawn+rtt)
 * The registry defaults to the build tree's stubs/registry next to this
 * program's folder (<build>/bench/../stubs/registry).
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "client/ninf.h"

extern char **environ;

enum { kRawIters = 20000 };

/* <dir of this program>/../stubs/registry/null */
static int default_null_path(char *out, size_t len) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n < 0) return -1;
  exe[n] = '\0';
  int written = snprintf(out, len, "%s/../stubs/registry/null", dirname(exe));
  return written > 0 && (size_t)written < len ? 0 : -1;
}

/* One spawn of `path --noop` and its reaping; seconds, or negative. */
static double spawn_once(const char *path) {
  char *argv[] = {(char *)path, "--noop", NULL};
  double start = bench_now();
  pid_t pid;
  int err = posix_spawn(&pid, path, NULL, NULL, argv, environ);
  if (err != 0) {
    fprintf(stderr, "bench_latency: posix_spawn %s: %s\n", path, strerror(err));
    return -1;
  }
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  double t = bench_now() - start;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "bench_latency: %s --noop did not exit 0\n", path);
    return -1;
  }
  return t;
}

static double median_spawn(const char *path, int iters, double *times) {
  for (int i = 0; i < bench_warmups(iters) + iters; i++) {
    double t = spawn_once(path);
    if (t < 0) return -1;
    if (i >= bench_warmups(iters)) times[i - bench_warmups(iters)] = t;
  }
  return bench_median(times, iters);
}

static double median_null(int iters, double *times) {
  for (int i = 0; i < bench_warmups(iters) + iters; i++) {
    double start = bench_now();
    if (Ninf_call("null") != 0) {
      Ninf_perror("Ninf_call(null)");
      return -1;
    }
    if (i >= bench_warmups(iters)) times[i - bench_warmups(iters)] = bench_now() - start;
  }
  return bench_median(times, iters);
}

int main(int argc, char **argv) {
  argc = Ninf_parse_arg(argc, argv);
  char path[PATH_MAX] = "";
  int iters = 300;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--registry") == 0 && i + 1 < argc) {
      snprintf(path, sizeof path, "%s/null", argv[++i]);
    } else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
      iters = atoi(argv[++i]);
    } else {
      iters = 0;
    }
  }
  if (iters < 1) {
    fprintf(stderr, "usage: %s [-server host] [-port n] [--registry DIR] [--iters N]\n", argv[0]);
    return 2;
  }
  if (path[0] == '\0' && default_null_path(path, sizeof path) != 0) {
    fprintf(stderr, "bench_latency: cannot locate the registry; use --registry DIR\n");
    return 1;
  }
  double *times = malloc((size_t)iters * sizeof *times);
  if (times == NULL) return 1;
  double null_call = median_null(iters, times);
  double spawn = null_call < 0 ? -1 : median_spawn(path, iters, times);
  double rtt = spawn < 0 ? -1 : pingpong_latency(kRawIters);
  free(times);
  if (rtt < 0) return 1;
  printf("latency iters=%d null_us=%.1f spawn_us=%.1f raw_rtt_us=%.2f ratio=%.3f\n", iters,
         null_call * 1e6, spawn * 1e6, rtt * 1e6, null_call / (spawn + rtt));
  return 0;
}
