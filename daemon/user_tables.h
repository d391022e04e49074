// The keys of the [users.NAME] and [limits.NAME] tables that every daemon
// with users reads alike (ninfd: server/named_tables.cc; ninf-meta:
// metaserver/meta_settings.cc), as rows of the table machinery
// (table_settings.h), so that one site's user tables mean the same to both
// and are written once: who a user is (key_file, cert_subject), its groups,
// and who may call a function (allow). Each daemon adds its own keys after
// these (ninfd: run_as, role, the quotas).
#pragma once

#include <string>
#include <vector>

#include "daemon/table_settings.h"
#include "daemon/users.h"

namespace ninf::daemon {

// A user must be someone: a key or a certificate to know them by. The
// TableCheck of a [users.NAME] table.
Status NeedsPrincipal(const std::string &where, const std::string &table, const NamedTable &keys);

// The identity keys of a [users.NAME] table, for a daemon whose settings
// struct is S.
template <class S>
std::vector<TableKeyOf<S, UserSpec>> IdentityUserKeys() {
  return {
      {"key_file", TableKeyKind::kString, 0, 0, nullptr, "",
       "file of the user's shared keys (mode 0600), read at start and on every reload",
       &UserSpec::key_file},
      {"cert_subject", TableKeyKind::kString, 0, 0, nullptr, "",
       "the subject of the user's TLS client certificate (\"CN=alice,O=site\")",
       &UserSpec::cert_subject},
      {"groups", TableKeyKind::kNames, 0, 0, nullptr, "",
       "groups the user is in, for allow lists (\"group:NAME\")", &UserSpec::groups, ValidUserName,
       "names (letters, digits, '_', '-', '.')"},
  };
}

// The allow list of a [limits.NAME] table, kept in T::*field.
template <class S, class T>
TableKeyOf<S, T> AllowKey(std::vector<std::string> T::*field) {
  return {"allow",
          TableKeyKind::kNames,
          0,
          0,
          nullptr,
          "",
          "who may call it: user names and \"group:NAME\" (left out: every user)",
          field,
          ValidAllowEntry,
          "user names or \"group:NAME\" (letters, digits, '_', '-', '.')"};
}

}  // namespace ninf::daemon
