// Unit tests of ninfd's named tables ([limits.NAME], [users.NAME]) as rows
// of the settings machinery (server/named_tables.cc, daemon/table_settings.h):
// a table inherits every key it does not set from the server's setting,
// key by key; the rows name real settings; --help lists every key; errors
// name the key.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "server/settings.h"
#include "tests/invocation_args.h"
#include "tests/server/daemon_fixture.h"

using namespace ninf::server;
using ninf::test::TempDir;

namespace {

const ninf::test::ArgsParser<Invocation> ParseNinfdArgs{ParseInvocation, "ninfd"};

ninf::Status ParseFile(const TempDir &dir, const std::string &toml, Settings *out) {
  dir.WriteFile("named.toml", toml);
  const std::string path = dir.Join("named.toml");
  Invocation inv;
  ninf::Status st = ParseNinfdArgs({"--config", path}, &inv);
  *out = inv.settings;
  return st;
}

// Server settings in which every inherited key has a value of its own, none
// of them a key's fallback, so that an inherited value can be told apart.
const char kServer[] =
    "call_wall_seconds = 3600\ncall_cpu_seconds = 7200\nexecutable_max_calls = 5\n"
    "mpi_ranks = 4\nlauncher = \"local\"\nuser_max_slots = 3\nuser_max_queued = 8\n"
    "store_bytes_per_owner = \"1M\"\nstore_entries_per_owner = 9\nuser_max_two_phase = 2\n";

// A value of `kind` that no server setting above has, as TOML.
std::string OwnValue(ninf::daemon::TableKeyKind kind, std::string_view key) {
  using ninf::daemon::TableKeyKind;
  switch (kind) {
    case TableKeyKind::kInteger:
    case TableKeyKind::kBytes:
      return "1";
    case TableKeyKind::kString:
      // A key that takes only some strings gets one that is not its default.
      if (key == "launcher") return "\"slurm\"";
      if (key == "role") return "\"operator\"";
      return "\"/some/file\"";
    case TableKeyKind::kNames:
      return "[\"alice\"]";
  }
  return "";
}

// Each field of a resolved table as text, by key name, to compare tables.
template <class T>
std::map<std::string, std::string> Fields(
    std::span<const ninf::daemon::TableKeyOf<Settings, T>> rows, const T &t) {
  std::map<std::string, std::string> out;
  for (const auto &row : rows)
    std::visit(
        [&](auto field) {
          using V = std::remove_cvref_t<decltype(t.*field)>;
          if constexpr (std::is_same_v<V, int64_t>)
            out[row.name] = std::to_string(t.*field);
          else if constexpr (std::is_same_v<V, std::string>)
            out[row.name] = t.*field;
          else
            for (std::string &text = out[row.name]; const std::string &s : t.*field)
              text += s + ",";
        },
        row.field);
  return out;
}

// The type a member pointer points at.
template <class T, class V>
V ValueOf(V T::*);

}  // namespace

TEST_CASE("named_tables_a_limits_table_with_only_allow_keeps_the_servers_limits", "[settings]") {
  // The bug a second, hand-parsed list bred: such a table dropped the wall
  // and CPU limits to none.
  TempDir dir;
  Settings s;
  REQUIRE(ParseFile(dir, std::string(kServer) + "[limits.echo]\nallow = [\"alice\"]\n", &s).ok());
  const FunctionLimits echo = s.LimitsOf("echo");
  CHECK(echo.wall_seconds == 3600);
  CHECK(echo.cpu_seconds == 7200);
  CHECK(echo.max_calls == 5);
  CHECK(echo.ranks == 4);
  CHECK(echo.launcher == "local");
  CHECK(echo.allow == std::vector<std::string>{"alice"});
  // A function without a table has exactly the server's, and every user.
  const FunctionLimits other = s.LimitsOf("dgesv");
  CHECK(other.wall_seconds == 3600);
  CHECK(other.allow.empty());
}

// For each key of `rows` but `skip`: a table `head` + that key alone
// changes that field of what `resolve` gives and no other.
template <class T, class Resolve>
void EachKeyOverridesItselfOnly(std::span<const ninf::daemon::TableKeyOf<Settings, T>> rows,
                                const std::string &head, std::string_view skip, Resolve resolve) {
  TempDir dir;
  Settings base;
  REQUIRE(ParseFile(dir, kServer + head, &base).ok());
  const auto inherited = Fields(rows, resolve(base));
  for (const auto &key : rows) {
    if (key.name == skip) continue;
    DYNAMIC_SECTION(head << key.name) {
      Settings s;
      const std::string table = head + key.name + " = " + OwnValue(key.kind, key.name) + "\n";
      REQUIRE(ParseFile(dir, kServer + table, &s).ok());
      for (const auto &[name, value] : Fields(rows, resolve(s))) {
        if (name == key.name)
          CHECK(value != inherited.at(name));
        else
          CHECK(value == inherited.at(name));
      }
    }
  }
}

TEST_CASE("named_tables_each_limits_key_overrides_itself_and_nothing_else", "[settings]") {
  EachKeyOverridesItselfOnly(FunctionKeys(), "[limits.f]\n", "",
                             [](const Settings &s) { return s.LimitsOf("f"); });
}

TEST_CASE("named_tables_each_users_key_overrides_itself_and_nothing_else", "[settings]") {
  // cert_subject is the table's principal: every table here has one.
  EachKeyOverridesItselfOnly(UserKeys(), "[users.u]\ncert_subject = \"CN=u\"\n", "cert_subject",
                             [](const Settings &s) { return s.Users().at("u"); });
  TempDir dir;
  Settings base;
  REQUIRE(
      ParseFile(dir, std::string(kServer) + "[users.u]\ncert_subject = \"CN=u\"\n", &base).ok());
  CHECK(base.Users().at("u").max_slots == 3);
  CHECK(base.Users().at("u").store_bytes == 1 << 20);
}

TEST_CASE("named_tables_quotas_come_from_the_users_table_then_the_server", "[settings]") {
  TempDir dir;
  Settings s;
  REQUIRE(ParseFile(dir,
                    std::string(kServer) +
                        "[users.alice]\nkey_file = \"x\"\nmax_slots = 1\nstore_bytes = 0\n",
                    &s)
              .ok());
  UserQuota a = s.QuotaOf("alice");
  CHECK(a.slots == 1);
  CHECK(a.store_bytes == 0);       // 0 in the table: no cap of its own
  CHECK(a.queued == 8);            // left out: the server's
  UserQuota b = s.QuotaOf("bob");  // no table
  CHECK(b.slots == 3);
  CHECK(b.two_phase == 2);
  CHECK(b.store_entries == 9);
}

TEST_CASE("named_tables_a_reload_of_a_server_limit_reaches_tables_without_their_own",
          "[settings]") {
  Settings running;
  running.function_limits["ep"] = {{"allow", std::vector<std::string>{"alice"}}};
  running.function_limits["dgesv"] = {{"wall_seconds", int64_t{7}}};
  Settings fresh = running;
  fresh.call_wall_seconds = 60;
  const Settings next = LiveSettings(running, fresh);
  CHECK(next.LimitsOf("ep").wall_seconds == 60);
  CHECK(next.LimitsOf("dgesv").wall_seconds == 7);
}

TEST_CASE("named_tables_rows_inherit_real_settings_of_their_type", "[settings]") {
  // A typo in `inherits` would silently give the key its type's zero.
  Settings s;
  auto check = [&](const auto &rows) {
    for (const auto &row : rows) {
      if (!row.inherits) continue;
      INFO(row.name << " inherits " << row.inherits);
      std::visit(
          [&](auto field) {
            using V = decltype(ValueOf(field));
            CHECK(ninf::daemon::SettingField<Settings, V>(SettingsTable(), s, row.inherits) !=
                  nullptr);
          },
          row.field);
    }
  };
  check(FunctionKeys());
  check(UserKeys());
}

TEST_CASE("named_tables_help_lists_every_key", "[settings]") {
  Invocation inv;
  REQUIRE(ParseNinfdArgs({"--help"}, &inv).ok());
  for (const FunctionKey &key : FunctionKeys())
    CHECK_THAT(inv.output, Catch::Contains(std::string("limits.NAME.") + key.name));
  for (const UserKey &key : UserKeys())
    CHECK_THAT(inv.output, Catch::Contains(std::string("users.NAME.") + key.name));
  CHECK_THAT(inv.output, Catch::Contains("left out: the server's call_wall_seconds"));
}

TEST_CASE("named_tables_errors_name_the_key", "[settings]") {
  TempDir dir;
  Settings s;
  CHECK_THAT(ParseFile(dir, "[limits.f]\nwall_secs = 1\n", &s).message(),
             Catch::Contains("unknown key limits.f.wall_secs") &&
                 Catch::Contains("wall_seconds, cpu_seconds"));
  CHECK_THAT(ParseFile(dir, "[limits.f]\nranks = 0\n", &s).message(),
             Catch::Contains("limits.f.ranks must be an integer >= 1"));
  CHECK_THAT(ParseFile(dir, "[limits.f]\nlauncher = \"pbs\"\n", &s).message(),
             Catch::Contains("limits.f.launcher must be \"local\" or \"slurm\""));
  CHECK_THAT(ParseFile(dir, "[users.u]\nkey_file = \"k\"\nstore_bytes = \"lots\"\n", &s).message(),
             Catch::Contains("users.u.store_bytes"));
  CHECK_THAT(ParseFile(dir, "[users.u]\ngroups = [\"a b\"]\n", &s).message(),
             Catch::Contains("users.u.groups entries are names"));
  CHECK_THAT(ParseFile(dir, "[users.u]\nmax_slots = 2\n", &s).message(),
             Catch::Contains("users.u needs a key_file or a cert_subject"));
  CHECK_THAT(ParseFile(dir, "[users.\"a b\"]\nkey_file = \"k\"\n", &s).message(),
             Catch::Contains("a name is letters"));
}
