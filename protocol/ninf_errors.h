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
 * Ninf_error_string(), and the codes carried by FRAME_ERROR on the wire.
 * Codes are stable: never renumber, only append.
 */
#define NINF_ERROR_MAP(X)                                                   \
  X(NINF_OK, 0, "no error")                                                 \
  X(NINF_ERR_INVALID_ARGUMENT, 1, "invalid argument")                       \
  X(NINF_ERR_CONNECT, 2, "cannot connect to the server")                    \
  X(NINF_ERR_PROTOCOL, 3, "protocol error")                                 \
  X(NINF_ERR_VERSION, 4, "protocol version not supported")                  \
  X(NINF_ERR_FUNCTION_NOT_FOUND, 5, "function not found")                   \
  X(NINF_ERR_ARGUMENT_MISMATCH, 6, "arguments do not match the interface")  \
  X(NINF_ERR_TOO_LARGE, 7, "request exceeds the server's per-call maximum") \
  X(NINF_ERR_OVERFLOW, 8, "array size overflows")                           \
  X(NINF_ERR_COMMUNICATION, 9, "communication failed")                      \
  X(NINF_ERR_TIMEOUT, 10, "timed out")                                      \
  X(NINF_ERR_EXECUTABLE, 11, "remote executable failed")                    \
  X(NINF_ERR_SERVER, 12, "server error")                                    \
  X(NINF_ERR_SHUTTING_DOWN, 13, "server is shutting down")                  \
  X(NINF_ERR_NO_MEMORY, 14, "out of memory")                                \
  X(NINF_ERR_INVALID_ID, 15, "invalid call id")                             \
  X(NINF_ERR_CANCELLED, 16, "call cancelled")                               \
  X(NINF_ERR_NOT_SUPPORTED, 17, "not supported")                            \
  X(NINF_ERR_INTERNAL, 18, "internal error")                                \
  X(NINF_ERR_CONFIG, 19, "configuration error")                             \
  X(NINF_ERR_LIMIT, 20, "call exceeded a server limit")                     \
  X(NINF_ERR_EXPIRED, 21, "expired (an idle handle, a ticket, kept data)")  \
  X(NINF_ERR_AUTH, 22, "authentication failed")                             \
  X(NINF_ERR_NOT_READY, 23, "the result is not ready yet")

typedef enum {
#define NINF_ERROR_ENUM_(name, code, text) name = code,
  NINF_ERROR_MAP(NINF_ERROR_ENUM_)
#undef NINF_ERROR_ENUM_
      NINF_ERR_COUNT_
} ninf_error_t;

#endif /* NINF_ERRORS_H */
