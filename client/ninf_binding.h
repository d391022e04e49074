/*
 * ninf_binding.h - calls for language bindings (the Fortran module), which
 * cannot use C varargs. Exported by libninf; applications use ninf.h and
 * grpc.h instead.
 *
 * The binding is handed the function's interface (one ninf_param_info per
 * IDL parameter) and fills in one ninf_argvalue per parameter; after the
 * library has evaluated the dimensions it asks the binding to confirm that
 * each array holds at least as many elements as the call will read or write,
 * so that a too-small array is refused instead of overrun.
 */
#ifndef NINF_BINDING_H
#define NINF_BINDING_H

#include <stddef.h>

#include "grpc.h"
#include "ninf.h"
#include "ninf_types.h" /* NINF_TYPE_*, NINF_MODE_*, ninf_binding_value */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const char *name; /* parameter name, for messages */
  int mode;         /* NINF_MODE_* (ninf_mode) */
  int type;         /* NINF_TYPE_* (ninf_type) */
  int is_array;     /* 1 for arrays and pointer parameters (OUT int *info) */
  int rank;         /* number of declared dimensions (1 for a pointer) */
} ninf_param_info;

/* One argument: ninf_binding_value (ninf_types.h). */

typedef struct {
  /* Fills values[0..nparams-1]. Returns 0, or non-zero after writing a
   * message into err (errlen bytes): the call then fails with
   * NINF_ERR_ARGUMENT_MISMATCH / GRPC_OTHER_ERROR_CODE and that message. */
  int (*collect)(void *ctx, int nparams, const ninf_param_info *params, ninf_binding_value *values,
                 char *err, size_t errlen);
  /* Optional. Called for every array parameter with the element count the
   * call transfers; returns 0 if the actual argument is large enough. */
  int (*verify)(void *ctx, int index, unsigned long long elements, char *err, size_t errlen);
  void *ctx;
  /* Optional; called instead of verify when set. The same check, told also
   * the extent of each of the parameter's `rank` dimensions, outermost
   * first as the IDL writes them (b[nrhs][ldb]: {nrhs, ldb}), so that a
   * refusal can show the shape the call expects. Last in the struct: a
   * binding that initializes the others by name leaves it NULL. */
  int (*verify_shape)(void *ctx, int index, unsigned long long elements, int rank,
                      const unsigned long long *extents, char *err, size_t errlen);
} ninf_binding_args;

/* Ninf_call / Ninf_call_async with the arguments from a binding. */
NINF_EXPORT int Ninf_call_binding(const char *name, const ninf_binding_args *args);
NINF_EXPORT int Ninf_call_async_binding(const char *name, const ninf_binding_args *args);
/* Two-phase calls (ninf.h): the ticket is written into ticket[ticket_size]. */
NINF_EXPORT int Ninf_call_submit_binding(char *ticket, size_t ticket_size, const char *name,
                                         const ninf_binding_args *args);
NINF_EXPORT int Ninf_call_collect_binding(const char *ticket, const char *name,
                                          const ninf_binding_args *args);

/* grpc_call / grpc_call_async with the arguments from a binding. */
NINF_EXPORT grpc_error_t grpc_call_binding(grpc_function_handle_t *handle,
                                           const ninf_binding_args *args);
NINF_EXPORT grpc_error_t grpc_call_async_binding(grpc_function_handle_t *handle,
                                                 grpc_sessionid_t *session_id,
                                                 const ninf_binding_args *args);

/*
 * Interrupting blocking calls, for bindings whose user can stop a call
 * (Python's Ctrl-C). With a check set, every blocking wait of libninf on a
 * socket (connecting, the TLS handshake, sending the arguments, waiting for
 * and reading the result, the interface and metaserver queries, a handle's
 * calls, a two-phase collect's pauses) sleeps at most 100 ms at a time, and
 * at once after a signal interrupted it (EINTR), then calls check(). A
 * nonzero answer fails the waiting call with NINF_ERR_CANCELLED
 * (GRPC_SESSION_CANCELLED for grpc_call) and the detail "interrupted": the
 * connection is reset, so ninfd kills the call's executable at once (a
 * handle's next call starts a new one). A placed call is not retried on
 * another server. The timeout keeps its meaning: the slices count against
 * it, "no progress for that long" still fails after that long.
 *
 * check is called from whichever thread waits (the session threads of
 * asynchronous calls too), possibly while the lock of the handle the call
 * uses is held: it must be thread-safe and quick, and must not call
 * libninf. It decides for the calling thread; a check that should stop
 * only some threads' calls (Python: the main thread's) returns 0 for the
 * others. NULL removes the check; without one every wait is one poll, as
 * before. Not interruptible: the name lookup (getaddrinfo) and the waits
 * for asynchronous calls (Ninf_wait, grpc_wait*), whose calls' own I/O
 * asks the check on their session threads. Process-wide; thread-safe.
 */
NINF_EXPORT void Ninf_binding_set_interrupt(int (*check)(void));

/*
 * Sets the default server from "host[:port]" as Ninf_set_server does;
 * `origin` is how the binding's user set it (e.g. "ninf.set_server(...)"),
 * which the advice for an unreachable server quotes. 0, or -1 with the
 * error recorded (NINF_ERR_INVALID_ARGUMENT for a malformed address).
 */
NINF_EXPORT int Ninf_binding_set_server(const char *address, const char *origin);

/*
 * How the binding's users name the default server, for the advice after a
 * connect error ("start ninfd there, or TEXT"), in place of the C client's
 * NINF_SERVER / Ninf_parse_arg / grpc_initialize. NULL or "" restores the
 * C client's. Process-wide; thread-safe.
 */
NINF_EXPORT void Ninf_binding_set_server_advice(const char *text);

/*
 * What a server serves, as JSON text for bindings that read JSON (the
 * Python client's ninf.functions and ninf.describe). `server` is
 * "host:port" as for -server, or NULL (and "") for the default server.
 * On success *json is a malloc'ed, NUL-terminated text that the caller
 * frees with Ninf_binding_free, and the result is 0; else -1 with the
 * error (Ninf_get_error) and *json NULL.
 *
 * Ninf_binding_functions: the names of the served functions, sorted:
 *   ["dgesv", "ep", ...]
 * Ninf_binding_describe: one function's interface, as calls check it:
 *   {"name", "module", "description", "language" ("C" or "Fortran"),
 *    "backend", "signature", "calc_order": EXPR,
 *    "params": [{"name", "mode" ("IN", "OUT", "INOUT", "WORK"), "type"
 *    ("double", ...), "pointer": bool, "dims": [EXPR, ...]}, ...]}
 * where an EXPR is the expression's nodes in prefix order, each
 * [OP, value] with OP a name of ninf.proto's ExprNode.Op ("CONST",
 * "PARAM" whose value is a parameter's 0-based index, "MUL", ...); an
 * empty list is no expression. Dimensions are outermost first, as the IDL
 * writes them. Thread-safe.
 */
NINF_EXPORT int Ninf_binding_functions(const char *server, char **json);
NINF_EXPORT int Ninf_binding_describe(const char *server, const char *name, char **json);
NINF_EXPORT void Ninf_binding_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* NINF_BINDING_H */
