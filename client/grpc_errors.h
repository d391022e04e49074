// GridRPC error codes: the text of each (grpc_error_string), and how the
// library's own errors (NINF_ERROR_MAP) map onto them.
#pragma once

#include <string>

#include "client/grpc.h"
#include "protocol/status.h"

namespace ninf::client {

// `at_handle_init`: connection failures mean "server not found" while a
// handle is being set up, "communication failed" during a call.
grpc_error_t ToGrpcError(const Status &st, bool at_handle_init);

// Never null; "unknown error code" for codes not in GRPC_ERROR_MAP.
const char *GrpcErrorText(grpc_error_t code);

// Keeps the failure behind `code` as this thread's last error (Ninf_perror,
// Ninf_get_error_detail) and returns `code`.
grpc_error_t RecordGrpc(grpc_error_t code, const Status &cause);
// The same for failures of the GridRPC layer itself, with a message.
grpc_error_t RecordGrpc(grpc_error_t code, const std::string &detail);

}  // namespace ninf::client
