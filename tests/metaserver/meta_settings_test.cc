// ninf-meta's settings table (metaserver/meta_settings.h): defaults match
// the struct, the shipped example documents every key and parses, the
// policy is checked, the views are recognised.
#include "metaserver/meta_settings.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "daemon/request_reader.h"
#include "metaserver/meta_server.h"

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
  REQUIRE(Parse({"--policy", "load"}, &inv, {{"NINF_META_POLICY", "random"}}).ok());
  CHECK(inv.settings.policy == "load");  // the flag wins over the environment
  REQUIRE(Parse({}, &inv, {{"NINF_META_POLICY", "round-robin"}}).ok());
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
  CHECK_THAT(inv.output, Catch::Contains("NINF_META_PROBE_SECONDS"));
}

// ninf-meta reads NINF_META_<NAME>; ninfd's NINF_<NAME> of one of its
// rows, set alone, is refused naming the right variable (issue 31: one
// shell or EnvironmentFile for both daemons), and ignored beside it.
TEST_CASE("meta_settings_reads_its_own_variables", "[meta_settings]") {
  MetaInvocation inv;
  REQUIRE(Parse({}, &inv, {{"NINF_META_PORT", "3999"}, {"NINF_META_KEY_FILE", "/k"}}).ok());
  CHECK(inv.settings.port == 3999);
  CHECK(inv.settings.key_file == "/k");
  const std::pair<const char *, const char *> refused[] = {{"NINF_PORT", "NINF_META_PORT"},
                                                           {"NINF_KEY_FILE", "NINF_META_KEY_FILE"},
                                                           {"NINF_METRICS", "NINF_META_METRICS"},
                                                           {"NINF_CONFIG", "NINF_META_CONFIG"}};
  for (const auto &[old_name, new_name] : refused) {
    ninf::Status st = Parse({}, &inv, {{old_name, "4000"}});
    CHECK(st.code() == NINF_ERR_INVALID_ARGUMENT);
    CHECK(st.message() == std::string(old_name) + " is ninfd's variable, and ninf-meta reads " +
                              new_name + ": rename it, or unset " + old_name +
                              " in ninf-meta's environment (with " + new_name +
                              " set too, ninf-meta ignores " + old_name + ")");
  }
  // Beside its own, ninfd's is ignored: both daemons' settings in one shell.
  REQUIRE(Parse({}, &inv, {{"NINF_PORT", "4000"}, {"NINF_META_PORT", "4100"}}).ok());
  CHECK(inv.settings.port == 4100);
  // A flag gives the value: ninfd's variable could not have been read anyway.
  REQUIRE(Parse({"--port", "4200"}, &inv, {{"NINF_PORT", "4000"}}).ok());
  CHECK(inv.settings.port == 4200);
  REQUIRE(Parse({"--config", NINF_META_EXAMPLE_CONFIG}, &inv, {{"NINF_CONFIG", "/x"}}).ok());
  // A variable no row of ninf-meta's has (ninfd's slots) is none of its business.
  REQUIRE(Parse({}, &inv, {{"NINF_SLOTS", "4"}}).ok());
  // The config file from NINF_META_CONFIG.
  REQUIRE(Parse({}, &inv, {{"NINF_META_CONFIG", NINF_META_EXAMPLE_CONFIG}}).ok());
  CHECK(inv.config_file == NINF_META_EXAMPLE_CONFIG);
}

// What a peer may send ninf-meta, from its frame table: the metaserver's own
// requests and the shared queries, never a call, a probe, kept data or a
// payload; a registration may carry 4 MiB of interfaces, nothing more.
TEST_CASE("meta_requests_table_refuses_what_is_not_its_own", "[meta_settings]") {
  const ninf::daemon::RequestRules &rules = ninf::meta::MetaRequestRules();
  const ninf::FrameType accepted[] = {ninf::FRAME_QUERY_INTERFACE,
                                      ninf::FRAME_STATS,
                                      ninf::FRAME_LIST,
                                      ninf::FRAME_AUTH,
                                      ninf::FRAME_PROOF,
                                      ninf::FRAME_META_REGISTER,
                                      ninf::FRAME_META_LOAD,
                                      ninf::FRAME_META_PLACE,
                                      ninf::FRAME_META_OUTCOME,
                                      ninf::FRAME_META_PROBED};
  CHECK(rules.frames.size() == std::size(accepted));
  for (ninf::FrameType t : accepted) {
    const ninf::daemon::RequestRules::Frame *f = rules.Find(t);
    REQUIRE(f);
    CHECK(f->max_header == (4u << 20));
    CHECK(f->max_payload == 0);
  }
  for (ninf::FrameType t : {ninf::FRAME_CALL, ninf::FRAME_PROBE, ninf::FRAME_FETCH,
                            ninf::FRAME_COLLECT, ninf::FRAME_RELEASE, ninf::FRAME_ARGS})
    CHECK(rules.Find(t) == nullptr);

  // A PROBE with its payload, sent to ninf-meta, is refused from its header.
  ninf::daemon::RequestReader reader(rules);
  ninf::FrameHeader h;
  h.type = ninf::FRAME_PROBE;
  h.payload_length = 1024;
  uint8_t fixed[ninf::kFrameHeaderSize];
  ninf::EncodeFrameHeader(h, fixed);
  std::span<uint8_t> space = reader.Space();
  REQUIRE(space.size() == sizeof fixed);
  std::memcpy(space.data(), fixed, sizeof fixed);
  ninf::Status st = reader.Commit(sizeof fixed);
  CHECK(st.code() == NINF_ERR_PROTOCOL);
  CHECK_THAT(st.message(), Catch::Contains("ninf-meta does not accept"));
}
