// The keys of ninfd's named tables, [limits.NAME] and [users.NAME], as rows
// of the daemon layer's table machinery (daemon/table_settings.h): parsing,
// --help, the docs check and inheritance all come from these two lists.
#include <iterator>
#include <string>
#include <vector>

#include "daemon/user_tables.h"
#include "server/settings.h"

namespace ninf::server {
namespace {

using daemon::TableKeyKind;

constexpr int64_t kMaxKey = int64_t{1} << 62;

bool Launcher(std::string_view name) { return name == "local" || name == "slurm"; }
bool RoleName(std::string_view role) { return role == "user" || role == "operator"; }

const FunctionKey kFunctionKeys[] = {
    {"wall_seconds", TableKeyKind::kInteger, 0, kMaxKey, "call_wall_seconds", "",
     "wall-clock budget of one call of the function (0: none)", &FunctionLimits::wall_seconds},
    {"cpu_seconds", TableKeyKind::kInteger, 0, kMaxKey, "call_cpu_seconds", "",
     "CPU-time budget of one call, all its threads together (0: none)",
     &FunctionLimits::cpu_seconds},
    {"executable_max_calls", TableKeyKind::kInteger, 1, kMaxKey, "executable_max_calls", "",
     "one-shot calls one of its executable processes serves (1: a new process for every call)",
     &FunctionLimits::max_calls},
    {"ranks", TableKeyKind::kInteger, 1, kMaxKey, "mpi_ranks", "",
     "ranks of its MPI job (Backend \"MPI\")", &FunctionLimits::ranks},
    {"launcher", TableKeyKind::kString, 0, 0, "launcher", "",
     "how its executables start: \"local\" or \"slurm\"", &FunctionLimits::launcher, Launcher,
     "\"local\" or \"slurm\""},
};

// ninfd's own keys of a [users.NAME] table, after the identity keys both
// daemons read (daemon/user_tables.h).
const UserKey kOwnUserKeys[] = {
    {"run_as", TableKeyKind::kString, 0, 0, nullptr, "",
     "local account the user's executables run as (ninfd as root)", &UserSpec::run_as},
    {"role", TableKeyKind::kString, 0, 0, nullptr, "user",
     "what the user sees of other users in STATS (--status): \"user\", only its own "
     "user.NAME.* lines; \"operator\", every user's",
     &UserSpec::role, RoleName, "\"user\" or \"operator\""},
    {"max_slots", TableKeyKind::kInteger, 0, kMaxKey, "user_max_slots", "",
     "slots the user's calls may hold at once (0: no cap)", &UserSpec::max_slots},
    {"max_queued", TableKeyKind::kInteger, 0, kMaxKey, "user_max_queued", "",
     "calls of the user that may wait for a slot (0: only queue_limit)", &UserSpec::max_queued},
    {"store_bytes", TableKeyKind::kBytes, 0, kMaxKey, "store_bytes_per_owner", "",
     "bytes of kept data the user may hold (0: no cap of its own)", &UserSpec::store_bytes},
    {"store_entries", TableKeyKind::kInteger, 0, kMaxKey, "store_entries_per_owner", "",
     "entries of kept data the user may hold (0: no cap of its own)", &UserSpec::store_entries},
    {"max_two_phase", TableKeyKind::kInteger, 0, kMaxKey, "user_max_two_phase", "",
     "two-phase results of the user kept at once (0: no cap of its own)", &UserSpec::max_two_phase},
};

}  // namespace

std::span<const FunctionKey> FunctionKeys() {
  static const std::vector<FunctionKey> keys = [] {
    std::vector<FunctionKey> out(std::begin(kFunctionKeys), std::end(kFunctionKeys));
    out.push_back(daemon::AllowKey<Settings>(&FunctionLimits::allow));
    return out;
  }();
  return keys;
}

std::span<const UserKey> UserKeys() {
  static const std::vector<UserKey> keys = [] {
    std::vector<UserKey> out = daemon::IdentityUserKeys<Settings>();
    out.insert(out.end(), std::begin(kOwnUserKeys), std::end(kOwnUserKeys));
    return out;
  }();
  return keys;
}

Status ReadFunctionTables(const std::string &path, const toml::table &limits,
                          daemon::NamedTables *out) {
  return daemon::ReadNamedTables(FunctionKeys(), path, "limits", nullptr, nullptr, limits, out);
}

Status ReadUserTables(const std::string &path, const toml::table &users, daemon::NamedTables *out) {
  return daemon::ReadNamedTables(UserKeys(), path, "users", ValidUserName, daemon::NeedsPrincipal,
                                 users, out);
}

std::string NamedTablesHelp() {
  return daemon::NamedTablesHelp(FunctionKeys(), "limits", "one per function") +
         daemon::NamedTablesHelp(UserKeys(), "users", "one per user");
}

FunctionLimits Settings::LimitsOf(std::string_view function) const {
  auto it = function_limits.find(function);
  return daemon::ResolveTable(FunctionKeys(), SettingsTable(), *this,
                              it == function_limits.end() ? nullptr : &it->second);
}

UserSpecs Settings::Users() const {
  UserSpecs out;
  for (const auto &[name, keys] : users)
    out[name] = daemon::ResolveTable(UserKeys(), SettingsTable(), *this, &keys);
  return out;
}

UserQuota Settings::QuotaOf(std::string_view user) const {
  auto it = users.find(user);
  return server::QuotaOf(daemon::ResolveTable(UserKeys(), SettingsTable(), *this,
                                              it == users.end() ? nullptr : &it->second));
}

}  // namespace ninf::server
