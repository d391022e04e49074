#include "protocol/status.h"

namespace ninf {

const char *ErrorText(int code) {
  switch (code) {
#define NINF_ERROR_CASE_(name, value, text, grpc, elsewhere) \
  case value:                                                \
    return text;
    NINF_ERROR_MAP(NINF_ERROR_CASE_)
#undef NINF_ERROR_CASE_
    default:
      return nullptr;
  }
}

std::string Status::ToString() const {
  const char *text = ErrorText(code_);
  std::string out = text ? text : "unknown error code " + std::to_string(code_);
  if (!message_.empty()) out += ": " + message_;
  return out;
}

}  // namespace ninf
