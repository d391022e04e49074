// Status: an error code from the NINF_ERROR_MAP (ninf_errors.h) plus a message that
// says what went wrong in words a user can act on. Every internal layer
// returns one; the public APIs turn it into their own error convention.
#pragma once

#include <string>
#include <utility>

#include "protocol/ninf_errors.h"
#include "protocol/protocol_export.h"

namespace ninf {

class NINF_PROTOCOL_API Status {
 public:
  Status() = default;
  Status(int code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == NINF_OK; }
  int code() const { return code_; }
  const std::string &message() const { return message_; }

  // "<text of code>: <message>", for logs and perror-style output.
  std::string ToString() const;

 private:
  int code_ = NINF_OK;
  std::string message_;
};

// The text of an error code, shared by Ninf_error_string and the daemon.
NINF_PROTOCOL_API const char *ErrorText(int code);

}  // namespace ninf

// Returns from the enclosing function if `expr` yields a failed Status.
#define NINF_RETURN_IF_ERROR(expr)                 \
  do {                                             \
    ::ninf::Status ninf_status__ = (expr);         \
    if (!ninf_status__.ok()) return ninf_status__; \
  } while (0)
