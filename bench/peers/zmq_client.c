/*
 * zmq_client.c - the ZeroMQ peer's client: a REQ socket (peer_bench.h has
 * the command line and output, zmq_wire.h the messages).
 *
 *     zmq_client --connect tcp://ADDRESS:PORT --workload W ...
 *
 * Arrays go out zero-copy (zmq_msg_init_data over the caller's own memory:
 * REQ/REP means the request has left before its reply arrives, so the
 * memory is not touched after the call returns); replies arrive in
 * ZeroMQ's buffers and are copied into the caller's arrays, which is what a
 * ZeroMQ user has to do.
 */
#include <stdio.h>
#include <string.h>
#include <zmq.h>

#include "bench/peers/peer_bench.h"
#include "bench/peers/zmq_wire.h"

typedef struct {
  void *zctx, *sock;
} Zmq;

static int zfail(const char *what) {
  fprintf(stderr, "zmq_client: %s: %s\n", what, zmq_strerror(zmq_errno()));
  return -1;
}

static int zmq_peer_connect(void *ctx, const char *address) {
  Zmq *z = ctx;
  z->zctx = zmq_ctx_new();
  z->sock = zmq_socket(z->zctx, ZMQ_REQ);
  int linger = 0;
  zmq_setsockopt(z->sock, ZMQ_LINGER, &linger, sizeof linger);
  return zmq_connect(z->sock, address) == 0 ? 0 : zfail(address);
}

/* Sends the header and then each array as a zero-copy part. */
static int send_request(Zmq *z, ZmqHeader head, const void **arrays, const size_t *sizes,
                        int count) {
  if (zmq_send(z->sock, &head, sizeof head, count ? ZMQ_SNDMORE : 0) < 0) return zfail("send");
  for (int i = 0; i < count; i++) {
    zmq_msg_t part;
    zmq_msg_init_data(&part, (void *)arrays[i], sizes[i], NULL, NULL);
    if (zmq_msg_send(&part, z->sock, i + 1 < count ? ZMQ_SNDMORE : 0) < 0) {
      zmq_msg_close(&part);
      return zfail("send");
    }
  }
  return 0;
}

/* Receives the reply header and copies its payload part, if any, to out. */
static int receive_reply(Zmq *z, ZmqHeader *head, void *out, size_t size) {
  if (zmq_recv(z->sock, head, sizeof *head, 0) != (int)sizeof *head) return zfail("recv");
  int more = 0;
  size_t len = sizeof more;
  zmq_getsockopt(z->sock, ZMQ_RCVMORE, &more, &len);
  if (!more) return size == 0 ? 0 : -1;
  zmq_msg_t part;
  zmq_msg_init(&part);
  if (zmq_msg_recv(&part, z->sock, 0) < 0) return zfail("recv");
  int rc = zmq_msg_size(&part) == size ? 0 : -1;
  if (rc == 0) memcpy(out, zmq_msg_data(&part), size);
  zmq_msg_close(&part);
  return rc;
}

static int zmq_peer_null(void *ctx) {
  Zmq *z = ctx;
  ZmqHeader head = {kZmqNull, 0, 0, 0};
  if (send_request(z, head, NULL, NULL, 0) != 0) return -1;
  return receive_reply(z, &head, NULL, 0);
}

static int zmq_peer_echo(void *ctx, void *buf, size_t size) {
  Zmq *z = ctx;
  ZmqHeader head = {kZmqEcho, 0, 0, 0};
  const void *arrays[] = {buf};
  if (send_request(z, head, arrays, &size, 1) != 0) return -1;
  return receive_reply(z, &head, buf, size);
}

static int zmq_peer_dgesv(void *ctx, int n, const double *a, double *b) {
  Zmq *z = ctx;
  ZmqHeader head = {kZmqDgesv, n, 0, 0};
  const void *arrays[] = {a, b};
  size_t sizes[] = {(size_t)n * n * sizeof(double), (size_t)n * sizeof(double)};
  if (send_request(z, head, arrays, sizes, 2) != 0) return -1;
  if (receive_reply(z, &head, b, sizes[1]) != 0) return -1;
  return head.info == 0 ? 0 : -1;
}

static void zmq_peer_close(void *ctx) {
  Zmq *z = ctx;
  zmq_close(z->sock);
  zmq_ctx_term(z->zctx);
}

int main(int argc, char **argv) {
  static Zmq zmq;
  PeerOps ops = {"zeromq",      &zmq,           zmq_peer_connect, zmq_peer_null,
                 zmq_peer_echo, zmq_peer_dgesv, zmq_peer_close};
  return peer_main(argc, argv, &ops);
}
