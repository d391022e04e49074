/*
 * ninf_errors.h - the one error list of the project, and the export macro.
 *
 * A leaf header of the protocol layer: it includes nothing, so every layer
 * (protocol, stub runtime, daemons, client libraries) can use the codes
 * without seeing the client API. ninf.h includes it for applications.
 */
#ifndef NINF_ERRORS_H
#define NINF_ERRORS_H

#if defined(__GNUC__)
#define NINF_EXPORT __attribute__((visibility("default")))
#else
#define NINF_EXPORT
#endif

/*
 * The one error list of the project. It generates the NINF_* codes below,
 * Ninf_error_string(), the codes carried by FRAME_ERROR on the wire, the
 * Fortran and Python constants, and two decisions of the client:
 *   X(name, code, text, grpc, elsewhere)
 *   grpc       the GridRPC error (GRPC_<grpc>, grpc.h) a failed call with this
 *              code reports (NINF_ERR_CONNECT when a handle is made:
 *              GRPC_SERVER_NOT_FOUND)
 *   elsewhere  1: a call placed by a metaserver that failed so, before any
 *              result byte, is retried on the next server it named; 0: it
 *              fails (the same call would fail there too)
 * Codes are stable: never renumber, only append.
 */
#define NINF_ERROR_MAP(X)                                                                       \
  X(NINF_OK, 0, "no error", NO_ERROR, 0)                                                        \
  X(NINF_ERR_INVALID_ARGUMENT, 1, "invalid argument", OTHER_ERROR_CODE, 0)                      \
  X(NINF_ERR_CONNECT, 2, "cannot connect to the server", COMMUNICATION_FAILED, 1)               \
  X(NINF_ERR_PROTOCOL, 3, "protocol error", COMMUNICATION_FAILED, 0)                            \
  X(NINF_ERR_VERSION, 4, "protocol version not supported", COMMUNICATION_FAILED, 0)             \
  X(NINF_ERR_FUNCTION_NOT_FOUND, 5, "function not found", FUNCTION_NOT_FOUND, 1)                \
  X(NINF_ERR_ARGUMENT_MISMATCH, 6, "arguments do not match the interface", OTHER_ERROR_CODE, 0) \
  X(NINF_ERR_TOO_LARGE, 7, "request exceeds the server's per-call maximum", RPC_REFUSED, 0)     \
  X(NINF_ERR_OVERFLOW, 8, "array size overflows", OTHER_ERROR_CODE, 0)                          \
  X(NINF_ERR_COMMUNICATION, 9, "communication failed", COMMUNICATION_FAILED, 1)                 \
  X(NINF_ERR_TIMEOUT, 10, "timed out", COMMUNICATION_FAILED, 1)                                 \
  X(NINF_ERR_EXECUTABLE, 11, "remote executable failed", SESSION_FAILED, 1)                     \
  X(NINF_ERR_SERVER, 12, "server error", RPC_REFUSED, 1)                                        \
  X(NINF_ERR_SHUTTING_DOWN, 13, "server is shutting down", RPC_REFUSED, 1)                      \
  X(NINF_ERR_NO_MEMORY, 14, "out of memory", SESSION_FAILED, 1)                                 \
  X(NINF_ERR_INVALID_ID, 15, "invalid call id", INVALID_SESSION_ID, 0)                          \
  X(NINF_ERR_CANCELLED, 16, "call cancelled", SESSION_CANCELLED, 0)                             \
  X(NINF_ERR_NOT_SUPPORTED, 17, "not supported", OTHER_ERROR_CODE, 0)                           \
  X(NINF_ERR_INTERNAL, 18, "internal error", OTHER_ERROR_CODE, 0)                               \
  X(NINF_ERR_CONFIG, 19, "configuration error", OTHER_ERROR_CODE, 0)                            \
  X(NINF_ERR_LIMIT, 20, "call exceeded a server limit", SESSION_FAILED, 0)                      \
  X(NINF_ERR_EXPIRED, 21, "expired (an idle handle, a ticket, kept data)", SESSION_FAILED, 0)   \
  X(NINF_ERR_AUTH, 22, "authentication failed", RPC_REFUSED, 0)                                 \
  X(NINF_ERR_NOT_READY, 23, "the result is not ready yet", NOT_COMPLETED, 0)                    \
  X(NINF_ERR_DENIED, 24, "this user may not call this function here", RPC_REFUSED, 1)

typedef enum {
#define NINF_ERROR_ENUM_(name, code, text, grpc, elsewhere) name = code,
  NINF_ERROR_MAP(NINF_ERROR_ENUM_)
#undef NINF_ERROR_ENUM_
      NINF_ERR_COUNT_
} ninf_error_t;

#endif /* NINF_ERRORS_H */
