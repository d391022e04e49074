/*
 * grpc.h - the OGF GridRPC end-user API (GFD.52) on top of libninf.
 *
 *     grpc_function_handle_t h;
 *     grpc_sessionid_t id;
 *     grpc_initialize(NULL);                       // NINF_SERVER, or a config file
 *     grpc_function_handle_default(&h, "dgesv");
 *     grpc_call(&h, n, nrhs, a, lda, ipiv, b, ldb, &info);
 *     grpc_call_async(&h, &id, ...); grpc_wait(id);
 *     grpc_function_handle_destruct(&h);
 *     grpc_finalize();
 *
 * A function handle binds one running executable on its server: the first
 * call starts it, later calls reuse it with no fork-exec, destruct stops it.
 * Calls on one handle run one after another; use several handles for
 * parallel calls. Arguments are those of Ninf_call (see ninf.h).
 *
 * Thread safety: every function may be called from several threads; one
 * handle may be shared, its calls are serialized.
 */
#ifndef NINF_GRPC_H
#define NINF_GRPC_H

#include <stddef.h>

#include "ninf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The GridRPC error list (GFD.52 names, in its order). */
#define GRPC_ERROR_MAP(X)                                           \
  X(GRPC_NO_ERROR, 0, "no error")                                   \
  X(GRPC_NOT_INITIALIZED, 1, "GridRPC is not initialized")          \
  X(GRPC_ALREADY_INITIALIZED, 2, "GridRPC is already initialized")  \
  X(GRPC_CONFIGFILE_NOT_FOUND, 3, "configuration file not found")   \
  X(GRPC_CONFIGFILE_ERROR, 4, "configuration file error")           \
  X(GRPC_SERVER_NOT_FOUND, 5, "server not found")                   \
  X(GRPC_FUNCTION_NOT_FOUND, 6, "function not found")               \
  X(GRPC_INVALID_FUNCTION_HANDLE, 7, "invalid function handle")     \
  X(GRPC_INVALID_SESSION_ID, 8, "invalid session id")               \
  X(GRPC_RPC_REFUSED, 9, "RPC refused by the server")               \
  X(GRPC_COMMUNICATION_FAILED, 10, "communication failed")          \
  X(GRPC_SESSION_FAILED, 11, "session failed")                      \
  X(GRPC_NOT_COMPLETED, 12, "call not completed")                   \
  X(GRPC_NONE_COMPLETED, 13, "no call completed")                   \
  X(GRPC_OTHER_ERROR_CODE, 14, "other error")                       \
  X(GRPC_UNKNOWN_ERROR_CODE, 15, "unknown error code")              \
  X(GRPC_LAST_ERROR_CODE, 16, "last error code")                    \
  /* Extension: what grpc_get_error says of a cancelled session. */ \
  X(GRPC_SESSION_CANCELLED, 100, "session cancelled")

typedef enum {
#define GRPC_ERROR_ENUM_(name, code, text) name = code,
  GRPC_ERROR_MAP(GRPC_ERROR_ENUM_)
#undef GRPC_ERROR_ENUM_
} grpc_error_code_t;

typedef int grpc_error_t;
typedef int grpc_sessionid_t;

#define GRPC_SESSIONID_VOID (-1)

/* A function handle. Declare one, pass its address; the fields are the
 * library's. */
typedef struct grpc_function_handle_s {
  void *impl;
  int magic;
} grpc_function_handle_t;

/*
 * config_file NULL: the default server comes from NINF_SERVER (or
 * localhost:3000). Otherwise a TOML file (see config/client.toml):
 * default_server, servers, connect_timeout, session_timeout, heartbeat.
 */
NINF_EXPORT grpc_error_t grpc_initialize(char *config_file_name);
NINF_EXPORT grpc_error_t grpc_finalize(void);

NINF_EXPORT grpc_error_t grpc_function_handle_default(grpc_function_handle_t *handle,
                                                      char *func_name);
/* host_port_str: "host", "host:port" or "[v6addr]:port". */
NINF_EXPORT grpc_error_t grpc_function_handle_init(grpc_function_handle_t *handle,
                                                   char *host_port_str, char *func_name);
NINF_EXPORT grpc_error_t grpc_function_handle_destruct(grpc_function_handle_t *handle);
NINF_EXPORT grpc_error_t grpc_get_handle(grpc_function_handle_t **handle,
                                         grpc_sessionid_t session_id);

NINF_EXPORT grpc_error_t grpc_call(grpc_function_handle_t *handle, ...);
NINF_EXPORT grpc_error_t grpc_call_async(grpc_function_handle_t *handle,
                                         grpc_sessionid_t *session_id, ...);

NINF_EXPORT grpc_error_t grpc_probe(grpc_sessionid_t session_id);
NINF_EXPORT grpc_error_t grpc_probe_or(grpc_sessionid_t *id_array, size_t length,
                                       grpc_sessionid_t *id_ptr);
NINF_EXPORT grpc_error_t grpc_cancel(grpc_sessionid_t session_id);
NINF_EXPORT grpc_error_t grpc_cancel_all(void);

NINF_EXPORT grpc_error_t grpc_wait(grpc_sessionid_t session_id);
NINF_EXPORT grpc_error_t grpc_wait_and(grpc_sessionid_t *id_array, size_t length);
NINF_EXPORT grpc_error_t grpc_wait_or(grpc_sessionid_t *id_array, size_t length,
                                      grpc_sessionid_t *id_ptr);
NINF_EXPORT grpc_error_t grpc_wait_all(void);
NINF_EXPORT grpc_error_t grpc_wait_any(grpc_sessionid_t *id_ptr);

NINF_EXPORT char *grpc_error_string(grpc_error_t error_code);
NINF_EXPORT grpc_error_t grpc_get_error(grpc_sessionid_t session_id);
NINF_EXPORT grpc_error_t grpc_get_failed_sessionid(grpc_sessionid_t *id_ptr);

#ifdef __cplusplus
}
#endif

#endif /* NINF_GRPC_H */
