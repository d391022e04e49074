#include "client/grpc_errors.h"

#include "client/last_error.h"

namespace ninf::client {

grpc_error_t ToGrpcError(const Status &st, bool at_handle_init) {
  // A server that cannot be reached when a handle is made was not found;
  // later, the line to it failed.
  if (st.code() == NINF_ERR_CONNECT && at_handle_init) return GRPC_SERVER_NOT_FOUND;
  switch (st.code()) {  // the grpc column of NINF_ERROR_MAP
#define GRPC_OF_(name, value, text, grpc, elsewhere) \
  case name:                                         \
    return GRPC_##grpc;
    NINF_ERROR_MAP(GRPC_OF_)
#undef GRPC_OF_
    case NINF_ERR_COUNT_:
      break;
  }
  return GRPC_OTHER_ERROR_CODE;  // no code of the map
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
