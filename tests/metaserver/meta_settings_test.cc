// ninf-meta's settings table (metaserver/meta_settings.h): defaults match
// the struct, the shipped example documents every key and parses, the
// policy is checked, the views are recognised.
#include "metaserver/meta_settings.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "daemon/request_reader.h"
#include "metaserver/meta_server.h"
#include "tests/invocation_args.h"

using namespace ninf::meta;

namespace {

const ninf::test::ArgsParser<MetaInvocation> Parse{ParseMetaInvocation, "ninf-meta"};

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
  ninf::test::CheckDocumentsEveryKey(NINF_META_EXAMPLE_CONFIG, MetaSettingsTable());
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

// ninf-meta reads NINF_META_<NAME>; ninfd's and the client's NINF_<NAME> of
// one of its settings are never read and never fatal (issue 31: one shell or
// EnvironmentFile for both daemons and a client). One set where ninf-meta's
// own and its flag are not is reported in ignored_variables, which main
// turns into a warning naming ninf-meta's own.
TEST_CASE("meta_settings_reads_its_own_variables", "[meta_settings]") {
  MetaInvocation inv;
  REQUIRE(Parse({}, &inv, {{"NINF_META_PORT", "3999"}, {"NINF_META_KEY_FILE", "/k"}}).ok());
  CHECK(inv.settings.port == 3999);
  CHECK(inv.settings.key_file == "/k");
  CHECK(inv.ignored_variables.empty());
  MetaInvocation defaults;
  REQUIRE(Parse({}, &defaults).ok());
  CHECK(defaults.ignored_variables.empty());

  // Every pair of the table, alone, with a value no setting accepts (and a
  // file that does not exist): parsed, ignored and reported; nothing
  // changed.
  std::span<const ninf::daemon::ForeignVariable> table = MetaForeignVariables();
  REQUIRE(table.size() >= 4);
  for (const ninf::daemon::ForeignVariable &v : table) {
    INFO(v.name);
    REQUIRE(Parse({}, &inv, {{v.name, "/nonexistent/x"}}).ok());
    REQUIRE(inv.ignored_variables.size() == 1);
    CHECK(std::string(inv.ignored_variables[0].name) == v.name);
    CHECK(std::string(inv.ignored_variables[0].ours) == v.ours);
    CHECK(ChangedMetaSettings(defaults.settings, inv.settings).empty());
    CHECK(inv.config_file == defaults.config_file);
    // The pair's names: NINF_<NAME> and ninf-meta's NINF_META_<NAME>.
    CHECK(std::string(v.ours) == "NINF_META_" + std::string(v.name).substr(5));
  }
  // All of them at once: one report each.
  std::map<std::string, std::string> all;
  for (const ninf::daemon::ForeignVariable &v : table) all[v.name] = "/nonexistent/x";
  REQUIRE(Parse({}, &inv, all).ok());
  std::set<std::string> reported;
  for (const ninf::daemon::ForeignVariable &v : inv.ignored_variables) reported.insert(v.name);
  CHECK(inv.ignored_variables.size() == table.size());
  CHECK(reported.size() == table.size());
  CHECK(ChangedMetaSettings(defaults.settings, inv.settings).empty());

  // The pairs issue 31 names, and the warning's exact words.
  std::map<std::string, const ninf::daemon::ForeignVariable *> by_name;
  for (const ninf::daemon::ForeignVariable &v : table) by_name[v.name] = &v;
  for (const char *name : {"NINF_CONFIG", "NINF_PORT", "NINF_KEY_FILE", "NINF_METRICS",
                           "NINF_TLS_CERT", "NINF_LOG_LEVEL", "NINF_POLICY"})
    CHECK(by_name.count(name) == 1);
  REQUIRE(by_name.count("NINF_KEY_FILE") == 1);
  CHECK(ninf::daemon::ForeignVariableWarning(*by_name["NINF_KEY_FILE"], "ninf-meta") ==
        "NINF_KEY_FILE is ninfd's and the client's variable and is not read by ninf-meta, "
        "which reads NINF_META_KEY_FILE");
  CHECK(ninf::daemon::ForeignVariableWarning(*by_name["NINF_PORT"], "ninf-meta") ==
        "NINF_PORT is ninfd's variable and is not read by ninf-meta, which reads NINF_META_PORT");

  // A client's key file beside ninf-meta's own: ninf-meta's, without a word.
  REQUIRE(Parse({}, &inv, {{"NINF_KEY_FILE", "/client"}, {"NINF_META_KEY_FILE", "/meta"}}).ok());
  CHECK(inv.settings.key_file == "/meta");
  CHECK(inv.ignored_variables.empty());
  // Alone, it is not ninf-meta's: keyless.
  REQUIRE(Parse({}, &inv, {{"NINF_KEY_FILE", "/client"}}).ok());
  CHECK(inv.settings.key_file.empty());
  // Beside its own, ninfd's is ignored: both daemons' settings in one shell.
  REQUIRE(Parse({}, &inv, {{"NINF_PORT", "4000"}, {"NINF_META_PORT", "4100"}}).ok());
  CHECK(inv.settings.port == 4100);
  CHECK(inv.ignored_variables.empty());
  // A flag gives the value: ninfd's variable could not have been read anyway.
  REQUIRE(Parse({"--port", "4200"}, &inv, {{"NINF_PORT", "4000"}}).ok());
  CHECK(inv.settings.port == 4200);
  CHECK(inv.ignored_variables.empty());
  REQUIRE(Parse({"--config", NINF_META_EXAMPLE_CONFIG}, &inv, {{"NINF_CONFIG", "/x"}}).ok());
  CHECK(inv.ignored_variables.empty());
  REQUIRE(Parse({}, &inv, {{"NINF_META_CONFIG", NINF_META_EXAMPLE_CONFIG}, {"NINF_CONFIG", "/x"}})
              .ok());
  CHECK(inv.config_file == NINF_META_EXAMPLE_CONFIG);
  CHECK(inv.ignored_variables.empty());
  // A value from ninf-meta's file: ninfd's variable would still have won
  // over it, so it is reported.
  REQUIRE(Parse({"--config", NINF_META_EXAMPLE_CONFIG}, &inv, {{"NINF_PORT", "4000"}}).ok());
  CHECK(inv.settings.port == 3100);
  REQUIRE(inv.ignored_variables.size() == 1);
  CHECK(std::string(inv.ignored_variables[0].name) == "NINF_PORT");
  // A variable of ninfd's that ninf-meta has no setting for (slots), or a
  // client's only (NINF_SERVER): none of its business, not reported.
  REQUIRE(Parse({}, &inv, {{"NINF_SLOTS", "4"}, {"NINF_SERVER", "h:1"}}).ok());
  CHECK(inv.ignored_variables.empty());
  // The config file from NINF_META_CONFIG.
  REQUIRE(Parse({}, &inv, {{"NINF_META_CONFIG", NINF_META_EXAMPLE_CONFIG}}).ok());
  CHECK(inv.config_file == NINF_META_EXAMPLE_CONFIG);

  // --help ends with the table, a line per pair.
  REQUIRE(Parse({"--help"}, &inv, {{"NINF_KEY_FILE", "/client"}}).ok());
  CHECK(inv.exit_now);
  for (const ninf::daemon::ForeignVariable &v : table)
    CHECK_THAT(inv.output, Catch::Contains(std::string("\n  ") + v.name + " (" + v.whose + ") -> " +
                                           v.ours + "\n"));
}

TEST_CASE("meta_settings_tls_ca_for_its_tools", "[meta_settings]") {
  MetaInvocation inv;
  REQUIRE(Parse({"--tls-ca", "/ca.pem", "--status"}, &inv).ok());
  CHECK(inv.settings.tls_ca == "/ca.pem");
  CHECK(inv.view == "stats");
  REQUIRE(Parse({"--servers"}, &inv, {{"NINF_META_TLS_CA", "/meta-ca.pem"}}).ok());
  CHECK(inv.settings.tls_ca == "/meta-ca.pem");
  // The client's variable is not ninf-meta's: reported, not read.
  REQUIRE(Parse({"--status"}, &inv, {{"NINF_TLS_CA", "/client-ca.pem"}}).ok());
  CHECK(inv.settings.tls_ca.empty());
  REQUIRE(inv.ignored_variables.size() == 1);
  CHECK(std::string(inv.ignored_variables[0].ours) == "NINF_META_TLS_CA");
}

// A pair whose own variable the daemon does not read would never be
// noticed: the table is refused as a whole (NINF_ERR_INTERNAL), so any
// start of the daemon shows the mistake.
TEST_CASE("meta_settings_foreign_table_must_name_own_variables", "[meta_settings]") {
  const ninf::daemon::ForeignVariable bad[] = {{"NINF_PORT", "ninfd's", "NINF_META_PORTS"}};
  CLI::App app("test");
  ninf::daemon::CommandLine cl;
  cl.env_prefix = "NINF_META_";
  cl.daemon = "ninf-meta";
  cl.foreign_variables = bad;
  const char *argv[] = {"ninf-meta"};
  MetaSettings settings;
  ninf::Status st = ninf::daemon::ParseCommandLine<MetaSettings>(
      app, MetaSettingsTable(), 1, argv, [](const char *) -> const char * { return nullptr; },
      nullptr, &cl, &settings);
  CHECK(st.code() == NINF_ERR_INTERNAL);
  CHECK(st.message() ==
        "the table of other programs' variables pairs NINF_PORT with NINF_META_PORTS, which "
        "ninf-meta does not read");
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

TEST_CASE("meta_settings_user_and_limits_tables", "[meta_settings]") {
  char name[] = "/tmp/ninf-meta-users-XXXXXX";
  const int fd = ::mkstemp(name);
  REQUIRE(fd >= 0);
  ::close(fd);
  const std::string path = name;
  {
    std::ofstream f(path);
    f << "[users.alice]\nkey_file = \"/k/alice\"\ngroups = [\"chem\"]\n"
         "[users.carol]\ncert_subject = \"CN=carol,O=site\"\n"
         "[limits.echo]\nallow = [\"group:chem\", \"bob\"]\n";
  }
  MetaInvocation inv;
  REQUIRE(Parse({"--config", path.c_str()}, &inv).ok());
  const ninf::daemon::UserSpecs users = inv.settings.Users();
  REQUIRE(users.size() == 2);
  CHECK(users.at("alice").key_file == "/k/alice");
  CHECK(users.at("alice").groups == std::vector<std::string>{"chem"});
  CHECK(users.at("carol").cert_subject == "CN=carol,O=site");
  CHECK(inv.settings.AllowOf("echo") == std::vector<std::string>{"group:chem", "bob"});
  CHECK(inv.settings.AllowOf("null").empty());
  // ninfd's own keys are not ninf-meta's: an error that names the key.
  {
    std::ofstream f(path);
    f << "[users.alice]\nkey_file = \"/k/alice\"\nmax_slots = 2\n";
  }
  ninf::Status st = Parse({"--config", path.c_str()}, &inv);
  CHECK(st.code() == NINF_ERR_INVALID_ARGUMENT);
  CHECK(st.message().find("users.alice.max_slots") != std::string::npos);
  // A user must be someone.
  {
    std::ofstream f(path);
    f << "[users.nobody]\ngroups = [\"chem\"]\n";
  }
  st = Parse({"--config", path.c_str()}, &inv);
  CHECK(st.message().find("needs a key_file or a cert_subject") != std::string::npos);
  ::unlink(name);
}
