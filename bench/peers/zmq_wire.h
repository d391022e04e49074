/*
 * zmq_wire.h - the ZeroMQ peer's messages (REQ/REP, multipart). A request's
 * first part is one ZmqHeader; the arrays follow as parts of their own, so
 * that each can be sent from and received into its own buffer:
 *
 *     null:  [header]                    -> [reply header]
 *     echo:  [header][bytes]             -> [reply header][the same bytes]
 *     dgesv: [header n][A: n*n doubles][b: n doubles]
 *                                        -> [reply header info][x: n doubles]
 */
#ifndef NINF_BENCH_ZMQ_WIRE_H
#define NINF_BENCH_ZMQ_WIRE_H

#include <stdint.h>

enum { kZmqNull = 1, kZmqEcho = 2, kZmqDgesv = 3 };

typedef struct {
  int32_t op;   /* kZmq*: a request; the reply echoes it */
  int32_t n;    /* dgesv's n */
  int32_t info; /* the reply's LAPACK info */
  int32_t unused;
} ZmqHeader;

#endif /* NINF_BENCH_ZMQ_WIRE_H */
