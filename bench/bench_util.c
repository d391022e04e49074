/*
 * bench_util.c - shared helpers of the benchmark programs (bench_util.h).
 */
#include "bench/bench_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double bench_percentile(double *v, int n, double q) {
  qsort(v, (size_t)n, sizeof *v, compare_doubles);
  /* ceil(q * n) without libm; the 1e-9 keeps 0.99 * 500 (not exact in
   * binary) at rank 495 and not 496. */
  double want = q * n - 1e-9;
  int rank = (int)want;
  if (rank < want) rank++;
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return v[rank - 1];
}

int bench_sizes(size_t max_size, size_t *sizes, int capacity) {
  int count = 0;
  for (size_t s = 1024; s <= max_size && count < capacity; s *= 4) sizes[count++] = s;
  return count;
}

int bench_iterations(size_t size, int max_iters) {
  size_t target = (size_t)256 << 20;
  size_t iters = target / size;
  if (iters < 5) iters = 5;
  if (iters > (size_t)max_iters) iters = (size_t)max_iters;
  return (int)iters;
}

int bench_warmups(int iterations) { return iterations / 10 > 1 ? iterations / 10 : 1; }

size_t bench_parse_size(const char *text) {
  char *end = NULL;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno != 0 || end == text) return 0;
  int shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10;
  if (*end == 'M' || *end == 'm') shift = 20;
  if (*end == 'G' || *end == 'g') shift = 30;
  if (shift != 0) end++;
  if (*end != '\0' || value > (SIZE_MAX >> shift)) return 0;
  return (size_t)value << shift;
}

/* Full-length I/O: 0 when every byte moved, -1 on error or early EOF. */
static int read_full(int fd, void *buf, size_t len) {
  char *p = buf;
  while (len > 0) {
    ssize_t n = read(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

static int write_full(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

static void set_nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* The request header the client sends before each run of round trips. */
typedef struct {
  uint64_t size;
  uint64_t count;
} Request;

/* The echo child: serves requests until {0, 0} or EOF. Never returns. */
static void echo_loop(int fd) {
  char *buf = NULL;
  size_t capacity = 0;
  Request req;
  while (read_full(fd, &req, sizeof req) == 0 && req.size > 0) {
    if (req.size > capacity) {
      free(buf);
      buf = malloc(req.size);
      if (buf == NULL) _exit(1);
      /* Touch every page once, so the first round trip does not pay for it. */
      memset(buf, 0, req.size);
      capacity = req.size;
    }
    for (uint64_t i = 0; i < req.count; i++) {
      if (read_full(fd, buf, req.size) != 0 || write_full(fd, buf, req.size) != 0) _exit(1);
    }
  }
  _exit(0);
}

static void echo_child(int listener) {
  int fd = accept(listener, NULL, NULL);
  close(listener);
  if (fd < 0) _exit(1);
  set_nodelay(fd);
  echo_loop(fd);
}

int bench_parse_transfer_options(int argc, char **argv, size_t *max_size, int *max_iters) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--max-size") == 0 && i + 1 < argc) {
      *max_size = bench_parse_size(argv[++i]);
      if (*max_size < 1024) return -1;
    } else if (strcmp(argv[i], "--max-iters") == 0 && i + 1 < argc) {
      *max_iters = atoi(argv[++i]);
      if (*max_iters < 1) return -1;
    } else {
      return -1;
    }
  }
  return 0;
}

int bench_pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    perror("bench: sched_setaffinity");
    return -1;
  }
  return 0;
}

int pingpong_start(PingPong *pp) { return pingpong_start_on(pp, -1); }

int pingpong_start_on(PingPong *pp, int cpu) {
  pp->fd = -1;
  pp->child = -1;
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0 ||
      listen(listener, 1) != 0 || getsockname(listener, (struct sockaddr *)&addr, &len) != 0) {
    perror("pingpong: listen on 127.0.0.1");
    if (listener >= 0) close(listener);
    return -1;
  }
  /* The listener exists before the fork, so connecting cannot race it. */
  pid_t child = fork();
  if (child < 0) {
    perror("pingpong: fork");
    close(listener);
    return -1;
  }
  if (child == 0) {
    if (cpu >= 0 && bench_pin(cpu) != 0) _exit(1);
    echo_child(listener);
  }
  close(listener);
  pp->child = child;
  pp->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (pp->fd < 0 || connect(pp->fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    perror("pingpong: connect");
    pingpong_stop(pp);
    return -1;
  }
  set_nodelay(pp->fd);
  return 0;
}

int pingpong_start_unix(PingPong *pp) {
  int sv[2];
  pp->fd = -1;
  pp->child = -1;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    perror("pingpong: socketpair");
    return -1;
  }
  pid_t child = fork();
  if (child < 0) {
    perror("pingpong: fork");
    close(sv[0]);
    close(sv[1]);
    return -1;
  }
  if (child == 0) {
    close(sv[0]);
    echo_loop(sv[1]);
  }
  close(sv[1]);
  pp->child = child;
  pp->fd = sv[0];
  return 0;
}

int pingpong_run(PingPong *pp, void *buf, size_t size, int warmups, int iters, double *times) {
  Request req = {size, (uint64_t)warmups + (uint64_t)iters};
  if (write_full(pp->fd, &req, sizeof req) != 0) {
    perror("pingpong: request");
    return -1;
  }
  for (int i = 0; i < warmups + iters; i++) {
    double start = bench_now();
    if (write_full(pp->fd, buf, size) != 0 || read_full(pp->fd, buf, size) != 0) {
      perror("pingpong: round trip");
      return -1;
    }
    if (i >= warmups) times[i - warmups] = bench_now() - start;
  }
  return 0;
}

void pingpong_stop(PingPong *pp) {
  if (pp->fd >= 0) {
    Request bye = {0, 0};
    (void)write_full(pp->fd, &bye, sizeof bye);
    close(pp->fd);
    pp->fd = -1;
  }
  if (pp->child > 0) {
    while (waitpid(pp->child, NULL, 0) < 0 && errno == EINTR) {
    }
    pp->child = -1;
  }
}

static double latency_over(int iters, int over_unix) {
  PingPong pp;
  double *times = malloc((size_t)iters * sizeof *times);
  char buf[8] = {0};
  double result = -1;
  if (times != NULL && (over_unix ? pingpong_start_unix(&pp) : pingpong_start(&pp)) == 0) {
    if (pingpong_run(&pp, buf, sizeof buf, bench_warmups(iters), iters, times) == 0)
      result = bench_median(times, iters);
    pingpong_stop(&pp);
  }
  free(times);
  return result;
}

double pingpong_latency(int iters) { return latency_over(iters, 0); }

double pingpong_latency_unix(int iters) { return latency_over(iters, 1); }

int bench_problem_init(BenchProblem *p, int n, unsigned long long seed) {
  size_t nn = (size_t)n * n;
  memset(p, 0, sizeof *p);
  p->n = n;
  p->a0 = malloc(nn * sizeof(double));
  p->a = malloc(nn * sizeof(double));
  p->b0 = calloc((size_t)n, sizeof(double));
  p->b = malloc((size_t)n * sizeof(double));
  p->ipiv = malloc((size_t)n * sizeof(int));
  if (!p->a0 || !p->a || !p->b0 || !p->b || !p->ipiv) return -1;
  unsigned long long state = seed;
  for (size_t i = 0; i < nn; i++) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    p->a0[i] = (double)(state >> 11) / 9007199254740992.0 - 0.5;
    p->b0[i % (size_t)n] += p->a0[i];
  }
  return 0;
}

void bench_problem_free(BenchProblem *p) {
  free(p->a0);
  free(p->a);
  free(p->b0);
  free(p->b);
  free(p->ipiv);
}
