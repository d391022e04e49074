/*
 * ninf_client.c - Ninf's side of bench/peers.sh, through the C API as a
 * user writes it (peer_bench.h has the command line and output).
 *
 *     ninf_client [--oneshot] --connect HOST:PORT --workload W ...
 *
 * By default every workload calls through GridRPC function handles (the
 * README's way for calls in a loop: one running executable per handle, as
 * the other peers keep one running server); peer=ninf. With --oneshot each
 * call is Ninf_call: a connection and a hand-off per call, to an executable
 * ninfd started ahead (warm) or kept from an earlier call (reused);
 * peer=ninf-oneshot. dgesv is the standard library's `linpack` (A and b
 * in, x back into b), the same traffic as the other peers' Dgesv.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/peers/peer_bench.h"
#include "client/grpc.h"
#include "client/ninf.h"

typedef struct {
  grpc_function_handle_t h;
  int bound;
} Handle;

typedef struct {
  int oneshot;
  char server[256];
  Handle null_h, echo_h, linpack_h;
} Ninf;

static int failed(const char *what, grpc_error_t e) {
  fprintf(stderr, "ninf_client: %s: %s: %s\n", what, grpc_error_string(e), Ninf_get_error_detail());
  return -1;
}

static int ninf_connect(void *ctx, const char *address) {
  Ninf *c = ctx;
  snprintf(c->server, sizeof c->server, "%s", address);
  /* Ninf_call's server: the same one the handles bind. */
  setenv("NINF_SERVER", address, 1);
  grpc_error_t e = grpc_initialize(NULL);
  return e == GRPC_NO_ERROR ? 0 : failed("grpc_initialize", e);
}

/*
 * A handle is bound on its function's first call (untimed: it is a
 * warm-up), so a process that runs one workload holds one executable.
 */
static grpc_function_handle_t *bound(Ninf *c, Handle *handle, char *name) {
  if (!handle->bound) {
    grpc_error_t e = grpc_function_handle_init(&handle->h, c->server, name);
    if (e != GRPC_NO_ERROR) {
      failed("grpc_function_handle_init", e);
      return NULL;
    }
    handle->bound = 1;
  }
  return &handle->h;
}

static int ninf_null(void *ctx) {
  Ninf *c = ctx;
  if (c->oneshot)
    return Ninf_call("null") == 0 ? 0 : failed("Ninf_call(null)", GRPC_OTHER_ERROR_CODE);
  grpc_function_handle_t *h = bound(c, &c->null_h, "null");
  grpc_error_t e = h ? grpc_call(h) : GRPC_OTHER_ERROR_CODE;
  return e == GRPC_NO_ERROR ? 0 : failed("grpc_call(null)", e);
}

/* echo moves doubles: a size that is not a multiple of 8 is rounded down. */
static int ninf_echo(void *ctx, void *buf, size_t size) {
  Ninf *c = ctx;
  long words = (long)(size / sizeof(double));
  if (c->oneshot)
    return Ninf_call("echo", words, (double *)buf) == 0
               ? 0
               : failed("Ninf_call(echo)", GRPC_OTHER_ERROR_CODE);
  grpc_function_handle_t *h = bound(c, &c->echo_h, "echo");
  grpc_error_t e = h ? grpc_call(h, words, (double *)buf) : GRPC_OTHER_ERROR_CODE;
  return e == GRPC_NO_ERROR ? 0 : failed("grpc_call(echo)", e);
}

/* linpack's A is IN: the executable factors its own copy, ours is untouched. */
static int ninf_dgesv(void *ctx, int n, const double *a, double *b) {
  Ninf *c = ctx;
  int info = -1;
  double *in = (double *)a;
  if (c->oneshot) {
    if (Ninf_call("linpack", n, in, b, (int *)NULL, &info) != 0)
      return failed("Ninf_call(linpack)", GRPC_OTHER_ERROR_CODE);
  } else {
    grpc_function_handle_t *h = bound(c, &c->linpack_h, "linpack");
    grpc_error_t e = h ? grpc_call(h, n, in, b, (int *)NULL, &info) : GRPC_OTHER_ERROR_CODE;
    if (e != GRPC_NO_ERROR) return failed("grpc_call(linpack)", e);
  }
  if (info != 0) fprintf(stderr, "ninf_client: linpack info %d\n", info);
  return info == 0 ? 0 : -1;
}

static void ninf_close(void *ctx) {
  Ninf *c = ctx;
  Handle *handles[] = {&c->null_h, &c->echo_h, &c->linpack_h};
  for (int i = 0; i < 3; i++)
    if (handles[i]->bound) grpc_function_handle_destruct(&handles[i]->h);
  grpc_finalize();
}

int main(int argc, char **argv) {
  static Ninf ninf;
  if (argc > 1 && strcmp(argv[1], "--oneshot") == 0) {
    ninf.oneshot = 1;
    argv[1] = argv[0];
    argc--, argv++;
  }
  PeerOps ops = {ninf.oneshot ? "ninf-oneshot" : "ninf",
                 &ninf,
                 ninf_connect,
                 ninf_null,
                 ninf_echo,
                 ninf_dgesv,
                 ninf_close};
  return peer_main(argc, argv, &ops);
}
