// The wall between C (and Fortran) callers and the C++ inside libninf: no
// exception crosses an extern "C" function. Every entry point runs its body
// through one of these guards, which turn an escaping exception into the
// API's own error convention (STYLE.md habit 16): std::bad_alloc becomes
// "out of memory", anything else an internal error that names it (a
// std::system_error from std::thread when no thread can be started, say).
#pragma once

#include <exception>
#include <new>
#include <string>

#include "client/grpc.h"
#include "client/grpc_errors.h"
#include "client/last_error.h"
#include "protocol/status.h"

namespace ninf::client {

// Why the body failed, as a Status; never throws (recording may allocate,
// so the out-of-memory case keeps to a fixed message).
inline Status StatusOfException(std::exception_ptr e) noexcept {
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc &) {
    return Status(NINF_ERR_NO_MEMORY, "");
  } catch (const std::exception &x) {
    try {
      return Status(NINF_ERR_INTERNAL, std::string("unexpected exception: ") + x.what());
    } catch (...) {
      return Status(NINF_ERR_INTERNAL, "");
    }
  } catch (...) {
    return Status(NINF_ERR_INTERNAL, "");
  }
}

// For the Ninf_* functions that return 0 / -1 (or an id >= 0) and record
// the last error.
template <typename Body>
int GuardNinf(Body &&body) noexcept {
  try {
    return body();
  } catch (...) {
    try {
      return RecordStatus(StatusOfException(std::current_exception()));
    } catch (...) {
      return -1;  // even the error could not be recorded
    }
  }
}

// For the grpc_* functions: GRPC_OTHER_ERROR_CODE with the reason kept as
// the last error detail.
template <typename Body>
grpc_error_t GuardGrpc(Body &&body) noexcept {
  try {
    return body();
  } catch (...) {
    try {
      return RecordGrpc(GRPC_OTHER_ERROR_CODE, StatusOfException(std::current_exception()));
    } catch (...) {
      return GRPC_OTHER_ERROR_CODE;
    }
  }
}

}  // namespace ninf::client
