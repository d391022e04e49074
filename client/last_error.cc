#include "client/last_error.h"

namespace ninf::client {
namespace {

thread_local int t_code = NINF_OK;
thread_local std::string t_detail;

}  // namespace

int RecordStatus(const Status &st) {
  t_code = st.code();
  t_detail = st.message();
  return st.ok() ? 0 : -1;
}

int LastErrorCode() { return t_code; }
const std::string &LastErrorDetail() { return t_detail; }

}  // namespace ninf::client
