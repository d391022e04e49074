// Status: an error code from the NINF_ERROR_MAP (ninf_errors.h) plus a message that
// says what went wrong in words a user can act on. Every internal layer
// returns one; the public APIs turn it into their own error convention.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "protocol/ninf_errors.h"
#include "protocol/protocol_export.h"

namespace ninf {

class NINF_PROTOCOL_API Status {
 public:
  Status() = default;
  Status(ninf_error_t code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == NINF_OK; }
  ninf_error_t code() const { return code_; }
  const std::string &message() const { return message_; }

  // "<text of code>: <message>", for logs and perror-style output.
  std::string ToString() const;

 private:
  ninf_error_t code_ = NINF_OK;
  std::string message_;
};

// The text of an error code, shared by Ninf_error_string and the daemon;
// null for a number that is no code.
NINF_PROTOCOL_API const char *ErrorText(int code);

// A failure's code as a peer sent it (FRAME_ERROR, a control message): one
// of the map's failure codes, or NINF_ERR_SERVER for anything else (0, a
// code this version does not know).
inline ninf_error_t ErrorFromWire(int64_t code) {
  return code > NINF_OK && code < NINF_ERR_COUNT_ ? static_cast<ninf_error_t>(code)
                                                  : NINF_ERR_SERVER;
}

}  // namespace ninf

// Returns from the enclosing function if `expr` yields a failed Status.
#define NINF_RETURN_IF_ERROR(expr)                 \
  do {                                             \
    ::ninf::Status ninf_status__ = (expr);         \
    if (!ninf_status__.ok()) return ninf_status__; \
  } while (0)
