// ninf-relay's settings (relay/relay_settings.h): its own NINF_RELAY_<NAME>
// variables, ninfd's and the client's NINF_<NAME> ignored with a warning
// (issue 42: a relay started where NINF_READY_FILE was exported for a ninfd
// wrote its port into ninfd's ready file), the shipped example file.
#include "relay/relay_settings.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "tests/invocation_args.h"

using namespace ninf::relay;

namespace {

const ninf::test::ArgsParser<RelayInvocation> ParseRelay{ParseRelayInvocation, "ninf-relay"};

}  // namespace

// The bug of issue 42: with NINF_READY_FILE exported for a ninfd, a relay
// started in the same shell wrote its port into ninfd's ready file.
TEST_CASE("relay_settings_ignore_ninfd_ready_file", "[relay_settings]") {
  RelayInvocation inv;
  REQUIRE(ParseRelay({}, &inv, {{"NINF_READY_FILE", "/tmp/ninfd.ready"}}).ok());
  CHECK(inv.settings.ready_file.empty());
}

// ninfd's and the client's variables in the relay's shell: none is read
// (ninfd's config file would even have stopped the relay from starting).
TEST_CASE("relay_settings_ignore_ninfd_variables", "[relay_settings]") {
  RelayInvocation inv;
  REQUIRE(ParseRelay({}, &inv,
                     {{"NINF_READY_FILE", "/tmp/ninfd.ready"},
                      {"NINF_PORT", "4000"},
                      {"NINF_KEY_FILE", "/client.key"},
                      {"NINF_LOG_LEVEL", "debug"},
                      {"NINF_CONFIG", "/nonexistent/ninfd.toml"}})
              .ok());
  CHECK(inv.settings.ready_file.empty());
  CHECK(inv.settings.port == ninf::kRelayPort);
  CHECK(inv.settings.key_file.empty());
  CHECK(inv.settings.log_level == "info");
  CHECK(inv.config_file != "/nonexistent/ninfd.toml");
}

TEST_CASE("relay_settings_read_own_variables", "[relay_settings]") {
  RelayInvocation inv;
  REQUIRE(ParseRelay({}, &inv,
                     {{"NINF_RELAY_READY_FILE", "/tmp/relay.ready"},
                      {"NINF_RELAY_PORT", "3999"},
                      {"NINF_RELAY_MAX_SERVERS", "7"},
                      {"NINF_READY_FILE", "/tmp/ninfd.ready"},
                      {"NINF_PORT", "4000"}})
              .ok());
  CHECK(inv.settings.ready_file == "/tmp/relay.ready");
  CHECK(inv.settings.port == 3999);
  CHECK(inv.settings.max_servers == 7);
  // A flag still wins over the relay's own variable.
  REQUIRE(ParseRelay({"--port", "4200"}, &inv, {{"NINF_RELAY_PORT", "3999"}}).ok());
  CHECK(inv.settings.port == 4200);
  // The config file from NINF_RELAY_CONFIG.
  REQUIRE(ParseRelay({}, &inv, {{"NINF_RELAY_CONFIG", NINF_RELAY_EXAMPLE_CONFIG}}).ok());
  CHECK(inv.config_file == NINF_RELAY_EXAMPLE_CONFIG);
}

TEST_CASE("relay_settings_example_config_documents_every_key", "[relay_settings]") {
  RelayInvocation inv;
  REQUIRE(ParseRelay({"--config", NINF_RELAY_EXAMPLE_CONFIG}, &inv).ok());
  CHECK(inv.settings.port == 3200);
  ninf::test::CheckDocumentsEveryKey(NINF_RELAY_EXAMPLE_CONFIG, RelaySettingsTable());
}

// Every pair of the table: set alone, parsed, ignored and reported; the
// warning names both variables; --help ends with the list.
TEST_CASE("relay_settings_foreign_variables_are_reported", "[relay_settings]") {
  RelayInvocation defaults, inv;
  REQUIRE(ParseRelay({}, &defaults).ok());
  CHECK(defaults.ignored_variables.empty());
  std::span<const ninf::daemon::ForeignVariable> table = RelayForeignVariables();
  auto table_keys = RelaySettingsTable();
  // One pair per setting, and one for the config file.
  CHECK(table.size() == table_keys.size() + 1);
  for (const ninf::daemon::ForeignVariable &v : table) {
    INFO(v.name);
    REQUIRE(ParseRelay({}, &inv, {{v.name, "/nonexistent/x"}}).ok());
    REQUIRE(inv.ignored_variables.size() == 1);
    CHECK(std::string(inv.ignored_variables[0].name) == v.name);
    CHECK(ninf::daemon::ChangedSettingKeys(table_keys, defaults.settings, inv.settings).empty());
    CHECK(inv.config_file == defaults.config_file);
    CHECK(std::string(v.ours) == "NINF_RELAY_" + std::string(v.name).substr(5));
  }
  std::map<std::string, const ninf::daemon::ForeignVariable *> by_name;
  for (const ninf::daemon::ForeignVariable &v : table) by_name[v.name] = &v;
  for (const char *name : {"NINF_CONFIG", "NINF_PORT", "NINF_READY_FILE", "NINF_KEY_FILE",
                           "NINF_LOG_LEVEL", "NINF_MAX_SERVERS"})
    CHECK(by_name.count(name) == 1);
  REQUIRE(by_name.count("NINF_READY_FILE") == 1);
  CHECK(ninf::daemon::ForeignVariableWarning(*by_name["NINF_READY_FILE"], "ninf-relay") ==
        "NINF_READY_FILE is ninfd's variable and is not read by ninf-relay, which reads "
        "NINF_RELAY_READY_FILE");
  // Beside the relay's own, or under a flag: the value is the relay's, no word.
  REQUIRE(ParseRelay({}, &inv, {{"NINF_READY_FILE", "/a"}, {"NINF_RELAY_READY_FILE", "/b"}}).ok());
  CHECK(inv.settings.ready_file == "/b");
  CHECK(inv.ignored_variables.empty());
  REQUIRE(ParseRelay({"--ready-file", "/c"}, &inv, {{"NINF_READY_FILE", "/a"}}).ok());
  CHECK(inv.settings.ready_file == "/c");
  CHECK(inv.ignored_variables.empty());
  // A variable of ninfd's the relay has no setting for: none of its business.
  REQUIRE(ParseRelay({}, &inv, {{"NINF_SLOTS", "4"}, {"NINF_SERVER", "h:1"}}).ok());
  CHECK(inv.ignored_variables.empty());
  // --help ends with the table, a line per pair.
  REQUIRE(ParseRelay({"--help"}, &inv).ok());
  CHECK(inv.exit_now);
  for (const ninf::daemon::ForeignVariable &v : table)
    CHECK_THAT(inv.output, Catch::Contains(std::string("\n  ") + v.name + " (" + v.whose + ") -> " +
                                           v.ours + "\n"));
}
