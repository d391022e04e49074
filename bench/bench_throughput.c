/*
 * bench_throughput.c - one-shot calls per second from N client threads.
 *
 *     bench_throughput [-server host] [-port n] [--threads N] [--size BYTES]
 *                      [--seconds S] [--no-check]
 *
 * N threads (default 1) each call Ninf_call one-shot in a loop for S seconds
 * (default 3) after a warm-up of 0.5 s: `null` when --size is 0 (the
 * default), else `echo` of SIZE bytes (INOUT, a multiple of 8). Every echo
 * result is checked, unless --no-check: then the buffer is filled once and
 * each call is the transfer alone (bench/python.sh compares the Python
 * client with that). Prints
 *   throughput what=null|echo size=.. threads=.. calls=.. seconds=..
 *              calls_per_s=.. mb_per_s=.. failed=..
 * mb_per_s counts the bytes of successful calls in one direction.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "client/ninf.h"

typedef struct {
  size_t size;
  int check;
  double warm_until, stop_at; /* bench_now() deadlines */
  long calls, failed;         /* counted after the warm-up */
} Worker;

static int one_call(double *buf, size_t words, uint64_t seed, int check) {
  if (words == 0) return Ninf_call("null") == 0;
  if (!check) return Ninf_call("echo", (long)words, buf) == 0;
  for (size_t i = 0; i < words; i++) buf[i] = (double)(seed + i);
  if (Ninf_call("echo", (long)words, buf) != 0) return 0;
  for (size_t i = 0; i < words; i++)
    if (buf[i] != (double)(seed + i)) return 0;
  return 1;
}

static void *worker(void *arg) {
  Worker *w = arg;
  size_t words = w->size / sizeof(double);
  double *buf = words ? malloc(w->size) : NULL;
  if (words && buf == NULL) {
    w->failed = 1;
    return NULL;
  }
  for (size_t i = 0; i < words; i++) buf[i] = (double)i;
  for (uint64_t n = 0;; n++) {
    double now = bench_now();
    if (now >= w->stop_at) break;
    int ok = one_call(buf, words, n * 7919, w->check);
    if (now < w->warm_until) continue;
    if (ok) {
      w->calls++;
    } else {
      if (w->failed++ == 0) Ninf_perror("bench_throughput");
    }
  }
  free(buf);
  return NULL;
}

int main(int argc, char **argv) {
  argc = Ninf_parse_arg(argc, argv);
  int threads = 1;
  size_t size = 0;
  double seconds = 3;
  int bad = 0, check = 1;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
      const char *text = argv[++i];
      size = strcmp(text, "0") == 0 ? 0 : bench_parse_size(text);
      bad |= size == 0 && strcmp(text, "0") != 0;
    } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = atof(argv[++i]);
    } else if (strcmp(argv[i], "--no-check") == 0) {
      check = 0;
    } else {
      bad = 1;
    }
  }
  if (bad || threads < 1 || threads > 1024 || seconds <= 0 || size % sizeof(double) != 0) {
    fprintf(stderr,
            "usage: %s [-server host] [-port n] [--threads N] [--size BYTES (multiple of 8)] "
            "[--seconds S] [--no-check]\n",
            argv[0]);
    return 2;
  }
  Worker *workers = calloc((size_t)threads, sizeof *workers);
  pthread_t *ids = calloc((size_t)threads, sizeof *ids);
  if (workers == NULL || ids == NULL) return 1;
  double start = bench_now();
  for (int t = 0; t < threads; t++) {
    workers[t] = (Worker){
        .size = size, .check = check, .warm_until = start + 0.5, .stop_at = start + 0.5 + seconds};
    if (pthread_create(&ids[t], NULL, worker, &workers[t]) != 0) {
      perror("pthread_create");
      return 1;
    }
  }
  long calls = 0, failed = 0;
  for (int t = 0; t < threads; t++) {
    pthread_join(ids[t], NULL);
    calls += workers[t].calls;
    failed += workers[t].failed;
  }
  printf(
      "throughput what=%s size=%zu threads=%d calls=%ld seconds=%.2f calls_per_s=%.1f "
      "mb_per_s=%.1f failed=%ld\n",
      size ? "echo" : "null", size, threads, calls, seconds, calls / seconds,
      (double)calls * (double)size / seconds / 1e6, failed);
  free(workers);
  free(ids);
  return failed ? 1 : 0;
}
