#include "client/grpc_errors.h"

#include "client/last_error.h"

namespace ninf::client {

grpc_error_t ToGrpcError(const Status &st, bool at_handle_init) {
  switch (st.code()) {
    case NINF_OK:
      return GRPC_NO_ERROR;
    case NINF_ERR_CONNECT:
      return at_handle_init ? GRPC_SERVER_NOT_FOUND : GRPC_COMMUNICATION_FAILED;
    case NINF_ERR_FUNCTION_NOT_FOUND:
      return GRPC_FUNCTION_NOT_FOUND;
    case NINF_ERR_COMMUNICATION:
    case NINF_ERR_TIMEOUT:
    case NINF_ERR_PROTOCOL:
    case NINF_ERR_VERSION:
      return GRPC_COMMUNICATION_FAILED;
    case NINF_ERR_EXECUTABLE:
    case NINF_ERR_NO_MEMORY:
    case NINF_ERR_LIMIT:
    case NINF_ERR_EXPIRED:
      return GRPC_SESSION_FAILED;
    case NINF_ERR_SHUTTING_DOWN:
    case NINF_ERR_SERVER:
    case NINF_ERR_TOO_LARGE:
    case NINF_ERR_AUTH:
      return GRPC_RPC_REFUSED;
    case NINF_ERR_INVALID_ID:
      return GRPC_INVALID_SESSION_ID;
    case NINF_ERR_NOT_READY:
      return GRPC_NOT_COMPLETED;
    case NINF_ERR_CANCELLED:
      return GRPC_SESSION_CANCELLED;
    default:
      return GRPC_OTHER_ERROR_CODE;
  }
}

const char *GrpcErrorText(grpc_error_t code) {
  switch (code) {
#define GRPC_ERROR_CASE_(name, value, text) \
  case value:                               \
    return text;
    GRPC_ERROR_MAP(GRPC_ERROR_CASE_)
#undef GRPC_ERROR_CASE_
    default:
      return "unknown error code";
  }
}

grpc_error_t RecordGrpc(grpc_error_t code, const Status &cause) {
  RecordStatus(code == GRPC_NO_ERROR ? Status() : cause);
  return code;
}

grpc_error_t RecordGrpc(grpc_error_t code, const std::string &detail) {
  // A failure of the GridRPC layer itself (not initialized, bad handle):
  // the caller broke the API's contract.
  return RecordGrpc(code, Status(NINF_ERR_INVALID_ARGUMENT, detail));
}

}  // namespace ninf::client
