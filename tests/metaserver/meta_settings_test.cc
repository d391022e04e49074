// ninf-meta's settings table (metaserver/meta_settings.h): defaults match
// the struct, the shipped example documents every key and parses, the
// policy is checked, the views are recognised.
#include "metaserver/meta_settings.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

using namespace ninf::meta;

namespace {

ninf::Status Parse(std::vector<std::string> args, MetaInvocation *inv,
                   std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), "ninf-meta");
  std::vector<const char *> argv;
  for (const std::string &a : args) argv.push_back(a.c_str());
  return ParseMetaInvocation(
      static_cast<int>(argv.size()), argv.data(),
      [&env](const char *name) -> const char * {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      inv);
}

}  // namespace

TEST_CASE("meta_settings_defaults_match_struct", "[meta_settings]") {
  MetaSettings from_table;
  for (const MetaSettingSpec &spec : MetaSettingsTable())
    REQUIRE(ninf::daemon::ApplySettingOf(spec, spec.default_value, "default", &from_table).ok());
  MetaSettings plain;
  CHECK(from_table.port == plain.port);
  CHECK(from_table.policy == plain.policy);
  CHECK(from_table.report_ms == plain.report_ms);
  CHECK(from_table.lease_ms == plain.lease_ms);
  CHECK(from_table.probe_large_bytes == plain.probe_large_bytes);
  CHECK(from_table.default_bandwidth == plain.default_bandwidth);
}

TEST_CASE("meta_settings_example_config_documents_every_key", "[meta_settings]") {
  MetaInvocation inv;
  REQUIRE(Parse({"--config", NINF_META_EXAMPLE_CONFIG}, &inv).ok());
  CHECK(inv.settings.port == 3100);
  std::ifstream in(NINF_META_EXAMPLE_CONFIG);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const MetaSettingSpec &spec : MetaSettingsTable())
    CHECK_THAT(text, Catch::Contains("\n" + std::string(spec.name) + " = "));
}

TEST_CASE("meta_settings_precedence_policy_and_views", "[meta_settings]") {
  MetaInvocation inv;
  REQUIRE(Parse({"--policy", "load"}, &inv, {{"NINF_POLICY", "random"}}).ok());
  CHECK(inv.settings.policy == "load");  // the flag wins over the environment
  REQUIRE(Parse({}, &inv, {{"NINF_POLICY", "round-robin"}}).ok());
  CHECK(inv.settings.policy == "round-robin");
  ninf::Status st = Parse({"--policy", "fastest"}, &inv);
  CHECK(st.code() == NINF_ERR_INVALID_ARGUMENT);
  CHECK_THAT(st.message(), Catch::Contains("completion, load, round-robin, random"));
  st = Parse({"--report-ms", "10"}, &inv);
  CHECK(st.code() == NINF_ERR_INVALID_ARGUMENT);  // below the bound
  REQUIRE(Parse({"--links", "--server", "127.0.0.1:9"}, &inv).ok());
  CHECK(inv.view == "links");
  CHECK(inv.status_server == "127.0.0.1:9");
  REQUIRE(Parse({"--list"}, &inv).ok());
  CHECK(inv.view == "functions");
  REQUIRE(Parse({"--help"}, &inv).ok());
  CHECK(inv.exit_now);
  CHECK_THAT(inv.output, Catch::Contains("NINF_PROBE_SECONDS"));
}
