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
 * pointer, strings as `const char *`.
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

#ifdef __cplusplus
}
#endif

#endif /* NINF_H */
