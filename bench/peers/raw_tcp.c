/*
 * raw_tcp.c - the raw TCP baseline across the veth pair, where
 * bench/raw_pingpong (which forks its own echo child on loopback) cannot
 * reach: the same ping-pong, but with the server and the client as
 * separate programs, so that each can run in its own namespace.
 *
 *     raw_tcp --listen ADDRESS --ready-file FILE      the echo server
 *     raw_tcp --connect ADDRESS:PORT --workload W ... a client (peer_bench.h)
 *
 * One TCP connection with TCP_NODELAY on both ends; a request is an 8-byte
 * size and that many bytes, which come back. The null call sends a size of
 * 0 and gets those 8 bytes back (raw_pingpong's 8-byte latency). The server
 * serves one connection at a time, which is all bench/peers.sh asks of it.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench/peers/peer_bench.h"

static int read_full(int fd, void *buf, size_t len) {
  char *p = buf;
  while (len > 0) {
    ssize_t n = read(fd, p, len);
    if (n <= 0) return -1;
    p += n, len -= (size_t)n;
  }
  return 0;
}

static int write_full(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n <= 0) return -1;
    p += n, len -= (size_t)n;
  }
  return 0;
}

static void no_delay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Echoes requests on one connection until the client closes it. */
static void serve_connection(int fd) {
  char *buf = NULL;
  size_t capacity = 0;
  uint64_t size;
  no_delay(fd);
  while (read_full(fd, &size, sizeof size) == 0) {
    if (size == 0) {
      if (write_full(fd, &size, sizeof size) != 0) break;
      continue;
    }
    if (size > capacity) {
      free(buf);
      buf = malloc(size);
      capacity = buf ? size : 0;
      if (!buf) break;
    }
    if (read_full(fd, buf, size) != 0 || write_full(fd, buf, size) != 0) break;
  }
  free(buf);
  close(fd);
}

static int serve(const char *address, const char *ready_file) {
  struct sockaddr_in sa = {.sin_family = AF_INET};
  if (inet_pton(AF_INET, address, &sa.sin_addr) != 1) {
    fprintf(stderr, "raw_tcp: %s is not an IPv4 address\n", address);
    return 2;
  }
  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  socklen_t len = sizeof sa;
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(lfd, 16) != 0 ||
      getsockname(lfd, (struct sockaddr *)&sa, &len) != 0) {
    perror("raw_tcp: listen");
    return 1;
  }
  FILE *ready = fopen(ready_file, "w");
  if (!ready || fprintf(ready, "%d\n", ntohs(sa.sin_port)) < 0 || fclose(ready) != 0) return 1;
  for (;;) {
    int fd = accept(lfd, NULL, NULL);
    if (fd >= 0) serve_connection(fd);
  }
}

/* ---- the client: PeerOps over one connection ---- */

typedef struct {
  int fd;
} Raw;

static int raw_connect(void *ctx, const char *address) {
  Raw *r = ctx;
  char host[64];
  int port;
  struct sockaddr_in sa = {.sin_family = AF_INET};
  if (sscanf(address, "%63[^:]:%d", host, &port) != 2 ||
      inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
    fprintf(stderr, "raw_tcp: bad address %s\n", address);
    return -1;
  }
  sa.sin_port = htons((uint16_t)port);
  r->fd = socket(AF_INET, SOCK_STREAM, 0);
  if (r->fd < 0 || connect(r->fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    perror("raw_tcp: connect");
    return -1;
  }
  no_delay(r->fd);
  return 0;
}

static int raw_null(void *ctx) {
  Raw *r = ctx;
  uint64_t size = 0;
  return write_full(r->fd, &size, sizeof size) == 0 && read_full(r->fd, &size, sizeof size) == 0
             ? 0
             : -1;
}

static int raw_echo(void *ctx, void *buf, size_t size) {
  Raw *r = ctx;
  uint64_t head = size;
  return write_full(r->fd, &head, sizeof head) == 0 && write_full(r->fd, buf, size) == 0 &&
                 read_full(r->fd, buf, size) == 0
             ? 0
             : -1;
}

/* No LAPACK here: the baseline is for the round-trip rows only. */
static int raw_dgesv(void *ctx, int n, const double *a, double *b) {
  (void)ctx, (void)n, (void)a, (void)b;
  fprintf(stderr, "raw_tcp: no dgesv (a transport baseline)\n");
  return -1;
}

static void raw_close(void *ctx) { close(((Raw *)ctx)->fd); }

int main(int argc, char **argv) {
  if (argc == 5 && strcmp(argv[1], "--listen") == 0 && strcmp(argv[3], "--ready-file") == 0)
    return serve(argv[2], argv[4]);
  static Raw raw;
  PeerOps ops = {"raw", &raw, raw_connect, raw_null, raw_echo, raw_dgesv, raw_close};
  return peer_main(argc, argv, &ops);
}
