/*
 * ninf.h - the Ninf client API for C (and C++) programs.
 *
 * A remote routine is called with the same arguments as the local one:
 *
 *     int info;
 *     if (Ninf_call("dgesv", n, nrhs, a, lda, ipiv, b, ldb, &info) != 0)
 *         Ninf_perror("dgesv");
 *
 * The library fetches the routine's interface from the server on first use
 * and caches it, so a bare argument list is enough. Arguments follow the IDL
 * order: IN scalars by value (C's varargs promotions are handled: float
 * travels as double, char and short as int), arrays and OUT scalars by
 * pointer, strings as `const char *` ("V", not 'V': a character where the
 * IDL says `IN string` is refused), WORK arrays as NULL (the server
 * allocates them; nothing is sent or returned). A LAPACK workspace query
 * (lwork = -1) cannot work remotely: pass the workspace size.
 *
 * Servers: a bare name goes to NINF_SERVER=host:port (default
 * localhost:3000) unless Ninf_parse_arg() saw -server/-port; a name of the
 * form "ninf://host:port/name" picks the server itself.
 *
 * Thread safety: every function may be called from several threads at once.
 * The last error is kept per thread.
 */
#ifndef NINF_H
#define NINF_H

#include <stdarg.h>

#include "ninf_errors.h" /* NINF_ERROR_MAP, ninf_error_t, NINF_EXPORT */

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Synchronous call. Returns 0 on success, -1 on error (then see
 * Ninf_get_error() and Ninf_perror()).
 */
NINF_EXPORT int Ninf_call(const char *name, ...);

/* The same with a va_list, for wrappers and other language bindings. */
NINF_EXPORT int Ninf_call_v(const char *name, va_list args);

/*
 * Asynchronous call: starts the call and returns its id (>= 0), or -1 on an
 * error found before the call left. The arrays must stay valid and untouched
 * until the call has been waited for.
 */
NINF_EXPORT int Ninf_call_async(const char *name, ...);
NINF_EXPORT int Ninf_call_async_v(const char *name, va_list args);

/* Waits for call `id`; 0 if it succeeded, -1 if it failed or id is unknown. */
NINF_EXPORT int Ninf_wait(int id);

/* Waits for every outstanding call; 0 if all succeeded, -1 otherwise. */
NINF_EXPORT int Ninf_wait_all(void);

/*
 * Waits for whichever outstanding call ends first and stores its id in *id;
 * returns that call's result (0 or -1). With nothing outstanding it stores
 * -1 in *id and returns -1 with NINF_ERR_INVALID_ID.
 */
NINF_EXPORT int Ninf_wait_any(int *id);

/*
 * Takes "-server host[:port]", "-port n" (and "--server"/"--port") out of
 * argv, sets the default server from them, and returns the new argc. A bad
 * value (a port that is not 1..65535, a malformed server) returns -1 with
 * NINF_ERR_INVALID_ARGUMENT and leaves argv and the default server alone.
 */
NINF_EXPORT int Ninf_parse_arg(int argc, char **argv);

/* Sets the default server for bare names (host NULL keeps the current host). */
NINF_EXPORT int Ninf_set_server(const char *host, int port);

/* Prints "msg: <error text>: <detail>" for this thread's last error. */
NINF_EXPORT void Ninf_perror(const char *msg);

/* This thread's last error code and its detail message (never NULL). */
NINF_EXPORT int Ninf_get_error(void);
NINF_EXPORT const char *Ninf_get_error_detail(void);

/* The text of an error code ("unknown error code N" for codes not listed). */
NINF_EXPORT const char *Ninf_error_string(int code);

/*
 * Where the time of a call went: what load tests and tuning need. The
 * server's figures come with the result, so a call that failed before its
 * result has only the client's.
 */
typedef struct Ninf_call_info {
  char server[256];              /* host:port (or unix:/path) it ran on; "" if none */
  int error;                     /* NINF_OK or the call's error code */
  int threads;                   /* threads the server granted the call (0: unknown) */
  double total_seconds;          /* the whole call, as the caller saw it */
  double queue_seconds;          /* waiting for a job slot on the server */
  double send_seconds;           /* the arguments out of the client */
  double server_recv_seconds;    /* the executable receiving them */
  double compute_seconds;        /* in the routine */
  double recv_seconds;           /* the results into the caller's arrays */
  double work_flops;             /* the call's CalcOrder (0: the IDL has none) */
  unsigned long long send_bytes; /* array bytes out */
  unsigned long long recv_bytes; /* array bytes in */
} Ninf_call_info;

/*
 * Fills *info with this thread's last Ninf_call (not async calls). Returns
 * 0, or -1 with NINF_ERR_INVALID_ARGUMENT for a NULL info and
 * NINF_ERR_INVALID_ID when the thread has made no call yet.
 */
NINF_EXPORT int Ninf_get_call_info(Ninf_call_info *info);

/*
 * What Ninf_call(name, ...) with these arguments would compute and move,
 * without making the call: the interface comes from the cache (fetched
 * from the server on first use, as Ninf_call does), the arguments are read
 * and sized as Ninf_call reads them, and nothing runs. Fills info->server
 * ("" when a metaserver would place the call), info->work_flops (the
 * IDL's CalcOrder on these IN scalars; 0 when it gives none),
 * info->send_bytes and info->recv_bytes; the other fields are 0. Returns 0,
 * or -1 with the errors Ninf_call reports before anything is sent (no
 * server, unknown function, bad arguments). libninf_offload decides with
 * it whether a LAPACK call is worth sending (docs/offload.md).
 */
NINF_EXPORT int Ninf_estimate(Ninf_call_info *info, const char *name, ...);
NINF_EXPORT int Ninf_estimate_v(Ninf_call_info *info, const char *name, va_list args);

/*
 * Transaction blocks (docs/transactions.md). Between begin and end,
 * Ninf_call records the call (its function, scalar values, array addresses
 * and extents) and returns 0 at once, or -1 for an error found while
 * recording (the call is then not part of the block). At end the block
 * runs as a dataflow graph: calls that do not depend on each other run at
 * once, on different servers when a metaserver places them. The caller's
 * memory ends exactly as running the calls in program order would leave
 * it, or, if a call fails, exactly as it was before the block.
 *
 * Rules: until end, do not read or write the arrays the block's calls
 * write, and do not change the arrays they read; control flow that depends
 * on results belongs after end. Ninf_call_async is refused inside a block.
 * One block per thread at a time.
 */
NINF_EXPORT int Ninf_transaction_begin(void);

/* Runs the block: 0 if every call succeeded, else -1 with the first failed
 * call's error (its detail names the call: "call 2 (dmmul): ..."). */
NINF_EXPORT int Ninf_transaction_end(void);

/* Marks the array that starts at `array`, recorded in this block, as an
 * intermediate: its final value is not written back at end. */
NINF_EXPORT int Ninf_transaction_discard(const void *array);

/* Whether this thread has an open block (1) or not (0). */
NINF_EXPORT int Ninf_transaction_active(void);

/* The thread's last ended block: its number of calls (-1 if none), and the
 * outcome of call `index` (0-based, in program order): info->error is
 * NINF_OK, the call's error, or NINF_ERR_CANCELLED for a call not run
 * because another failed; info->server is where it ran. */
NINF_EXPORT int Ninf_transaction_calls(void);
NINF_EXPORT int Ninf_transaction_call_info(int index, Ninf_call_info *info);
/* That call's error detail ("" when it succeeded; never NULL; valid until
 * the thread's next block begins). */
NINF_EXPORT const char *Ninf_transaction_call_detail(int index);

/*
 * Two-phase calls (docs/transactions.md). Ninf_call_submit sends the
 * arguments and returns once the server has them, with a ticket; the
 * connection is released and the program may even exit. Ninf_call_collect,
 * in the same or another process holding the ticket (its text, e.g. passed
 * on a command line) and the submitter's key, takes the same function name
 * and argument list and fills the OUT arrays, waiting while the call still
 * runs. A result is collected once; it is kept on the server for the
 * server's result_keep_seconds from submission. Errors: an unknown or
 * collected ticket (NINF_ERR_INVALID_ID), an expired one (NINF_ERR_EXPIRED),
 * another user than the submitter (NINF_ERR_AUTH), or the call's own error.
 */
#define NINF_TICKET_SIZE 256
typedef struct Ninf_ticket {
  char text[NINF_TICKET_SIZE]; /* "ninf1:ID:TOKEN:FUNCTION@SERVER", NUL-terminated */
} Ninf_ticket;
NINF_EXPORT int Ninf_call_submit(Ninf_ticket *ticket, const char *name, ...);
NINF_EXPORT int Ninf_call_submit_v(Ninf_ticket *ticket, const char *name, va_list args);
NINF_EXPORT int Ninf_call_collect(const Ninf_ticket *ticket, const char *name, ...);
NINF_EXPORT int Ninf_call_collect_v(const Ninf_ticket *ticket, const char *name, va_list args);

#ifdef __cplusplus
}
#endif

#endif /* NINF_H */
