/*
 * zmq_server.c - the ZeroMQ peer's server: one REP socket, one request at a
 * time, the pattern the ZeroMQ guide starts every request-reply service
 * with (zmq_wire.h has the messages).
 *
 *     zmq_server --bind tcp://ADDRESS:PORT --ready-file FILE
 *
 * PORT may be * (any free port); the endpoint bound is written to FILE.
 * Replies send received message parts back without copying them (an echo is
 * the request's own part; x is solved in place in b's part). LAPACK needs
 * doubles aligned; a part whose data is not is copied into an aligned
 * buffer first.
 */
#include <lapacke.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "bench/peers/zmq_wire.h"

enum { kMaxParts = 3 };

/* Receives one multipart request; returns the number of parts or -1. */
static int receive_parts(void *sock, zmq_msg_t *parts) {
  int count = 0, more = 1;
  while (more) {
    if (count == kMaxParts) return -1;
    zmq_msg_init(&parts[count]);
    if (zmq_msg_recv(&parts[count], sock, 0) < 0) return -1;
    more = zmq_msg_more(&parts[count]);
    count++;
  }
  return count;
}

/* A writable, aligned view of a part holding `count` doubles. */
static double *aligned_doubles(zmq_msg_t *part, size_t count, double **spare) {
  if (zmq_msg_size(part) != count * sizeof(double)) return NULL;
  void *data = zmq_msg_data(part);
  if ((uintptr_t)data % _Alignof(double) == 0) return data;
  free(*spare);
  *spare = malloc(count * sizeof(double));
  if (*spare) memcpy(*spare, data, count * sizeof(double));
  return *spare;
}

/* Solves in b's part (or a copy put back into it); returns LAPACK's info. */
static int solve(zmq_msg_t *parts, int n) {
  double *spare_a = NULL, *spare_b = NULL;
  double *a = aligned_doubles(&parts[1], (size_t)n * n, &spare_a);
  double *b = aligned_doubles(&parts[2], (size_t)n, &spare_b);
  int info = -1;
  int *ipiv = malloc((size_t)n * sizeof(int));
  if (a && b && ipiv) info = LAPACKE_dgesv(LAPACK_COL_MAJOR, n, 1, a, n, ipiv, b, n);
  if (b && b != zmq_msg_data(&parts[2])) memcpy(zmq_msg_data(&parts[2]), b, (size_t)n * 8);
  free(ipiv);
  free(spare_a);
  free(spare_b);
  return info;
}

/* Serves one request; -1 when the socket fails. */
static int serve_one(void *sock) {
  zmq_msg_t parts[kMaxParts];
  int count = receive_parts(sock, parts);
  if (count < 1 || zmq_msg_size(&parts[0]) != sizeof(ZmqHeader)) {
    fprintf(stderr, "zmq_server: malformed request\n");
    return -1;
  }
  ZmqHeader head;
  memcpy(&head, zmq_msg_data(&parts[0]), sizeof head);
  int payload = 0; /* the part sent back after the header, 0 for none */
  if (head.op == kZmqEcho && count == 2) payload = 1;
  if (head.op == kZmqDgesv && count == 3 && head.n > 0) {
    head.info = solve(parts, head.n);
    payload = 2;
  }
  int rc = zmq_send(sock, &head, sizeof head, payload ? ZMQ_SNDMORE : 0) < 0 ? -1 : 0;
  /* zmq_msg_send hands the received part back to ZeroMQ: no copy. */
  if (rc == 0 && payload && zmq_msg_send(&parts[payload], sock, 0) < 0) rc = -1;
  for (int i = 0; i < count; i++) zmq_msg_close(&parts[i]);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 5 || strcmp(argv[1], "--bind") != 0 || strcmp(argv[3], "--ready-file") != 0) {
    fprintf(stderr, "usage: %s --bind tcp://ADDRESS:PORT --ready-file FILE\n", argv[0]);
    return 2;
  }
  void *zctx = zmq_ctx_new();
  void *sock = zmq_socket(zctx, ZMQ_REP);
  char endpoint[256];
  size_t len = sizeof endpoint;
  if (zmq_bind(sock, argv[2]) != 0 ||
      zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, endpoint, &len) != 0) {
    fprintf(stderr, "zmq_server: %s: %s\n", argv[2], zmq_strerror(zmq_errno()));
    return 1;
  }
  FILE *ready = fopen(argv[4], "w");
  if (!ready || fprintf(ready, "%s\n", endpoint) < 0 || fclose(ready) != 0) return 1;
  while (serve_one(sock) == 0) {
  }
  zmq_close(sock);
  zmq_ctx_term(zctx);
  return 1;
}
