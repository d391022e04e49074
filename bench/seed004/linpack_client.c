/*
 * linpack_client.c - seed 004's single-client measurements (Figs. 3/4 and
 * Table 2), one program run inside the weak client's control group and
 * network namespace by bench/seed004/fig3_4.sh and table2.sh.
 *
 *   linpack_client sweep [--methods ninf,blocked,unblocked] [--min-seconds S]
 *                  [--unblocked-max N] [-server HOST:PORT] n...
 *       For each n, the same random system (b = A * ones) solved by each
 *       method, repeated until S seconds of wall time (default 2) have
 *       passed, at least once; one line per n and method:
 *         linpack n=N method=M reps=R seconds=T mflops=X residual=Y
 *                 [bytes=B transfer_s=T compute_s=C]
 *       ninf: Ninf_call("linpack") on NINF_SERVER (A and b in, x out, the
 *       paper's traffic); its time is the whole call on this clock, as the
 *       paper's T_Ninf_call; bytes / transfer_s is its throughput (the
 *       executable receiving the arguments + the results coming back, per
 *       call, Ninf_get_call_info). blocked: LAPACK dgesv of OpenBLAS (its
 *       threads: OPENBLAS_NUM_THREADS). unblocked: dgefa/dgesl (unblocked.c),
 *       skipped above --unblocked-max. Mflops count 2/3 n^3 + 2 n^2 as the
 *       paper does. Exit 1 if any residual is not small.
 *
 *   linpack_client ftp HOST:PORT IN_BYTES OUT_BYTES REPS
 *       The FTP baseline: over one TCP connection to a sink, REPS times
 *       IN_BYTES out and OUT_BYTES back (a Linpack call's 8n^2 + 8n in and
 *       8n out); prints per rep and the median:
 *         ftp in=I out=O rep=K seconds=T mbps=X   ...   ftp median ... mbps=X
 *
 *   linpack_client sink [--listen ADDR] [--port P] [--ready-file F]
 *       The FTP peer: reads a 16-byte header {in, out} (little-endian
 *       uint64), reads in bytes, writes out bytes, until the peer closes;
 *       one connection at a time, forever (the driver stops it).
 *
 * Why a weak client: the paper's clients were slow workstations calling a
 * faster server; the driver gives this program a CPU quota so that its own
 * solves run at a fraction of the server's speed, while its Ninf_calls wait
 * on the link and the server.
 */
#include <arpa/inet.h>
#include <cblas.h>
#include <errno.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "bench/seed004/unblocked.h"
#include "client/ninf.h"

enum { kMaxSizes = 64, kMaxReps = 64 };

typedef enum { kNinf, kBlocked, kUnblocked, kMethods } Method;
static const char *const kMethodName[kMethods] = {"ninf", "blocked", "unblocked"};

typedef BenchProblem Problem;

/*
 * LINPACK's scaled residual ||A x - b|| / (n ||A|| ||x|| eps) in the
 * infinity norm, against the original A and b: below 16 is a right answer.
 */
static double scaled_residual(const Problem *p, const double *x) {
  int n = p->n;
  double *r = malloc((size_t)n * sizeof(double));
  if (!r) return INFINITY;
  memcpy(r, p->b0, (size_t)n * sizeof(double));
  cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, p->a0, n, x, 1, -1.0, r, 1);
  double rnorm = 0, xnorm = 0, anorm = 0;
  for (int i = 0; i < n; i++) {
    rnorm = fmax(rnorm, fabs(r[i]));
    xnorm = fmax(xnorm, fabs(x[i]));
    double row = 0;
    for (int j = 0; j < n; j++) row += fabs(p->a0[(size_t)j * n + i]);
    anorm = fmax(anorm, row);
  }
  free(r);
  return rnorm / ((double)n * anorm * xnorm * DBL_EPSILON);
}

typedef struct {
  double seconds;  /* the solves' own time, summed */
  double residual; /* the worst of the reps */
  double transfer; /* ninf: arguments in + results back, summed */
  double compute;  /* ninf: the server's routine time, summed */
  double bytes;    /* ninf: array bytes both ways, summed */
  int reps;
} Tally;

/* One solve from fresh copies, added to *t; -1 on failure. */
static int solve_once(Problem *p, Method m, Tally *t) {
  int n = p->n, info = 0;
  memcpy(p->a, p->a0, (size_t)n * n * sizeof(double));
  memcpy(p->b, p->b0, (size_t)n * sizeof(double));
  double start = bench_now();
  switch (m) {
    case kNinf:
      if (Ninf_call("linpack", n, p->a, p->b, (int *)NULL, &info) != 0) {
        Ninf_perror("Ninf_call(linpack)");
        return -1;
      }
      break;
    case kBlocked:
      info = LAPACKE_dgesv(LAPACK_COL_MAJOR, n, 1, p->a, n, p->ipiv, p->b, n);
      break;
    case kUnblocked:
      info = unblocked_dgefa(p->a, n, n, p->ipiv);
      if (info == 0) unblocked_dgesl(p->a, n, n, p->ipiv, p->b);
      break;
    case kMethods:
      return -1;
  }
  t->seconds += bench_now() - start;
  if (m == kNinf) {
    Ninf_call_info ci;
    if (Ninf_get_call_info(&ci) == 0) {
      t->transfer += ci.server_recv_seconds + ci.recv_seconds;
      t->compute += ci.compute_seconds;
      t->bytes += (double)(ci.send_bytes + ci.recv_bytes);
    }
  }
  double residual = info == 0 ? scaled_residual(p, p->b) : INFINITY;
  t->residual = fmax(t->residual, residual);
  t->reps++;
  if (!(residual < 16)) {
    fprintf(stderr, "linpack_client: %s n=%d wrong solution (info %d, scaled residual %g)\n",
            kMethodName[m], n, info, residual);
    return -1;
  }
  return 0;
}

/*
 * Repeats until min_seconds of wall time have passed (at least one solve),
 * however many solves that takes: a client under a CPU quota runs in bursts
 * of the quota's period (100 ms), so only a window of many periods measures
 * its average speed; a cap on the count would time small n inside one burst.
 */
static int measure(Problem *p, Method m, double min_seconds) {
  Tally t = {0};
  double start = bench_now();
  do {
    if (solve_once(p, m, &t) != 0) return -1;
  } while (bench_now() - start < min_seconds);
  double n = p->n, flops = 2.0 / 3.0 * n * n * n + 2.0 * n * n;
  printf("linpack n=%d method=%s reps=%d seconds=%.6f mflops=%.2f residual=%.3f", p->n,
         kMethodName[m], t.reps, t.seconds / t.reps, flops * t.reps / t.seconds * 1e-6, t.residual);
  if (m == kNinf)
    printf(" bytes=%.0f transfer_s=%.6f compute_s=%.6f", t.bytes / t.reps, t.transfer / t.reps,
           t.compute / t.reps);
  printf("\n");
  fflush(stdout);
  return 0;
}

static int parse_methods(const char *list, int *on) {
  char buf[128];
  snprintf(buf, sizeof buf, "%s", list);
  for (int m = 0; m < kMethods; m++) on[m] = 0;
  for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
    int found = 0;
    for (int m = 0; m < kMethods; m++)
      if (strcmp(w, kMethodName[m]) == 0) on[m] = found = 1;
    if (!found) return -1;
  }
  return 0;
}

static int sweep(int argc, char **argv) {
  int on[kMethods] = {1, 1, 1}, sizes[kMaxSizes], count = 0, unblocked_max = 1 << 20;
  double min_seconds = 2;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--methods") == 0 && i + 1 < argc) {
      if (parse_methods(argv[++i], on) != 0) count = -1;
    } else if (strcmp(argv[i], "--min-seconds") == 0 && i + 1 < argc) {
      min_seconds = atof(argv[++i]);
    } else if (strcmp(argv[i], "--unblocked-max") == 0 && i + 1 < argc) {
      unblocked_max = atoi(argv[++i]);
    } else if (count >= 0 && count < kMaxSizes && atoi(argv[i]) > 0 && atoi(argv[i]) <= 20000) {
      sizes[count++] = atoi(argv[i]);
    } else {
      count = -1;
    }
    if (count < 0) break;
  }
  if (count <= 0 || !(min_seconds >= 0)) {
    fprintf(stderr,
            "usage: linpack_client sweep [--methods ninf,blocked,unblocked] "
            "[--min-seconds S] [--unblocked-max N] [-server HOST:PORT] n...\n");
    return 2;
  }
  int status = 0, warmed = 0;
  for (int s = 0; s < count && status == 0; s++) {
    Problem p;
    if (bench_problem_init(&p, sizes[s], 1998u + (unsigned)sizes[s]) != 0) {
      fprintf(stderr, "linpack_client: out of memory for n=%d\n", sizes[s]);
      status = 1;
    }
    for (int m = 0; m < kMethods && status == 0; m++) {
      if (!on[m] || (m == kUnblocked && sizes[s] > unblocked_max)) continue;
      /* One unmeasured solve per method at the first size: libraries
       * loaded, pages touched, the server's executable started once. */
      Tally warm = {0};
      if (!warmed && solve_once(&p, (Method)m, &warm) != 0) status = 1;
      if (status == 0 && measure(&p, (Method)m, min_seconds) != 0) status = 1;
    }
    warmed = 1;
    bench_problem_free(&p);
  }
  return status;
}

/* ---- the FTP baseline ------------------------------------------------- */

static int write_full(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t k = write(fd, buf, len);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    buf += k;
    len -= (size_t)k;
  }
  return 0;
}

/* Reads len bytes through a scratch buffer of cap bytes; -1 on error or EOF. */
static int read_into(int fd, char *scratch, size_t cap, uint64_t len) {
  while (len > 0) {
    size_t want = len < cap ? (size_t)len : cap;
    ssize_t k = read(fd, scratch, want);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    len -= (uint64_t)k;
  }
  return 0;
}

static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

enum { kScratch = 1 << 20 };
/* What one request may ask for: a Linpack call's bytes at n = 20000. */
static const uint64_t kMaxRequest = (uint64_t)4 << 30;

static int ftp(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: linpack_client ftp HOST:PORT IN_BYTES OUT_BYTES REPS\n");
    return 2;
  }
  char host[256];
  snprintf(host, sizeof host, "%s", argv[0]);
  char *colon = strrchr(host, ':');
  size_t in = bench_parse_size(argv[1]), out = bench_parse_size(argv[2]);
  int reps = atoi(argv[3]);
  if (!colon || in == 0 || out == 0 || in > kMaxRequest || out > kMaxRequest || reps < 1 ||
      reps > kMaxReps) {
    fprintf(stderr, "linpack_client ftp: bad arguments\n");
    return 2;
  }
  *colon = '\0';
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
  if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
    fprintf(stderr, "linpack_client ftp: %s is not an IPv4 address\n", host);
    return 2;
  }
  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    perror("linpack_client ftp: connect");
    return 1;
  }
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  char *buf = calloc(1, in > kScratch ? in : kScratch);
  double times[kMaxReps];
  if (!buf) return 1;
  /* One unmeasured exchange: the connection's window opened as a long
   * transfer's would be. */
  for (int r = -1; r < reps; r++) {
    unsigned char header[16];
    put_u64(header, in);
    put_u64(header + 8, out);
    double start = bench_now();
    if (write_full(fd, (const char *)header, sizeof header) != 0 || write_full(fd, buf, in) != 0 ||
        read_into(fd, buf, kScratch, out) != 0) {
      perror("linpack_client ftp: transfer");
      free(buf);
      return 1;
    }
    double seconds = bench_now() - start;
    if (r < 0) continue;
    times[r] = seconds;
    printf("ftp in=%zu out=%zu rep=%d seconds=%.6f mbps=%.3f\n", in, out, r, seconds,
           (double)(in + out) / seconds * 1e-6);
  }
  double median = bench_median(times, reps);
  printf("ftp median in=%zu out=%zu reps=%d seconds=%.6f mbps=%.3f\n", in, out, reps, median,
         (double)(in + out) / median * 1e-6);
  free(buf);
  close(fd);
  return 0;
}

/* Exactly len bytes into buf; -1 on error or EOF. */
static int read_exact(int fd, unsigned char *buf, size_t len) {
  while (len > 0) {
    ssize_t k = read(fd, buf, len);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    buf += k;
    len -= (size_t)k;
  }
  return 0;
}

/* One connection's exchanges, until the peer closes or asks too much. */
static void serve(int fd, char *buf) {
  unsigned char header[16];
  while (read_exact(fd, header, sizeof header) == 0) {
    uint64_t in = get_u64(header), out = get_u64(header + 8);
    if (in > kMaxRequest || out > kMaxRequest || read_into(fd, buf, kScratch, in) != 0) return;
    for (uint64_t left = out; left > 0;) {
      size_t chunk = left < kScratch ? (size_t)left : kScratch;
      if (write_full(fd, buf, chunk) != 0) return;
      left -= chunk;
    }
  }
}

static int sink(int argc, char **argv) {
  const char *listen_addr = "0.0.0.0", *ready = NULL;
  int port = 0;
  for (int i = 0; i < argc; i += 2) {
    if (i + 1 >= argc) return 2;
    if (strcmp(argv[i], "--listen") == 0) {
      listen_addr = argv[i + 1];
    } else if (strcmp(argv[i], "--port") == 0) {
      port = atoi(argv[i + 1]);
    } else if (strcmp(argv[i], "--ready-file") == 0) {
      ready = argv[i + 1];
    } else {
      fprintf(stderr, "usage: linpack_client sink [--listen ADDR] [--port P] [--ready-file F]\n");
      return 2;
    }
  }
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  socklen_t len = sizeof addr;
  if (lfd < 0 || inet_pton(AF_INET, listen_addr, &addr.sin_addr) != 1 ||
      setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(lfd, 4) != 0 ||
      getsockname(lfd, (struct sockaddr *)&addr, &len) != 0) {
    perror("linpack_client sink: listen");
    return 1;
  }
  char *buf = calloc(1, kScratch);
  if (!buf) return 1;
  if (ready) {
    /* Written whole under another name, then renamed: the driver waits for
     * the file to have content and must never read half a port. */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", ready);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%d\n", ntohs(addr.sin_port)) < 0 || fclose(f) != 0 ||
        rename(tmp, ready) != 0) {
      perror("linpack_client sink: ready file");
      return 1;
    }
  }
  /* One client at a time, as an FTP transfer of one file; forever, until
   * the driver stops it. */
  for (;;) {
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0) continue;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    serve(fd, buf);
    close(fd);
  }
}

int main(int argc, char **argv) {
  /* -server HOST:PORT for the ninf method; the default is NINF_SERVER. */
  argc = Ninf_parse_arg(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "sweep") == 0) return sweep(argc - 2, argv + 2);
  if (argc >= 2 && strcmp(argv[1], "ftp") == 0) return ftp(argc - 2, argv + 2);
  if (argc >= 2 && strcmp(argv[1], "sink") == 0) return sink(argc - 2, argv + 2);
  fprintf(stderr, "usage: linpack_client sweep|ftp|sink ... (see the top of linpack_client.c)\n");
  return 2;
}
