#include "daemon/user_tables.h"

namespace ninf::daemon {

Status NeedsPrincipal(const std::string &where, const std::string &table, const NamedTable &keys) {
  if (keys.count("key_file") || keys.count("cert_subject")) return Status::Ok();
  return Status(NINF_ERR_INVALID_ARGUMENT,
                where + ": " + table + " needs a key_file or a cert_subject");
}

}  // namespace ninf::daemon
