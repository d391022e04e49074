// Unit tests of the settings table (server/settings.h): precedence
// flag > environment > file > default, bounds, and error messages.
#include "server/settings.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <map>

#include "daemon/metrics_endpoint.h"
#include "tests/invocation_args.h"
#include "tests/server/daemon_fixture.h"

using namespace ninf::server;
using ninf::daemon::ParseMetricsAddress;
using ninf::test::TempDir;

namespace {

struct Run {
  ninf::Status status;
  Invocation inv;
};

const SettingSpec *FindSetting(const std::string &name) {
  for (const SettingSpec &spec : SettingsTable())
    if (name == spec.name) return &spec;
  FAIL("no setting " << name);
  return nullptr;
}

Run Parse(std::vector<std::string> args, const std::map<std::string, std::string> &env = {}) {
  Run r;
  const ninf::test::ArgsParser<Invocation> parse{ParseInvocation, "ninfd"};
  r.status = parse(std::move(args), &r.inv, env);
  return r;
}

}  // namespace

TEST_CASE("settings_defaults", "[settings]") {
  Run r = Parse({});
  REQUIRE(r.status.ok());
  const Settings &s = r.inv.settings;
  CHECK(s.port == 3000);
  CHECK(s.listen == "127.0.0.1");
  CHECK(s.registry == "stdlib");
  CHECK(s.slots == 0);
  CHECK(s.threads_per_job == 0);
  CHECK(s.queue_limit == 1024);
  CHECK(s.max_call_bytes == (int64_t{8} << 30));
  CHECK(s.max_connections == 1024);
  CHECK(s.idle_timeout_seconds == 60);
  CHECK(s.grace_seconds == 10);
  CHECK(s.warm_executables == 1);
  CHECK(s.log_level == "info");
  CHECK(s.ready_file.empty());
  CHECK_FALSE(r.inv.status);
}

TEST_CASE("settings_table_defaults_match_struct", "[settings]") {
  // The table's default strings are what --help shows; they must parse to
  // the struct's defaults.
  Settings from_table;
  for (const SettingSpec &spec : SettingsTable())
    REQUIRE(ApplySetting(spec, spec.default_value, "default", &from_table).ok());
  Settings plain;
  CHECK(from_table.port == plain.port);
  CHECK(from_table.max_call_bytes == plain.max_call_bytes);
  CHECK(from_table.queue_limit == plain.queue_limit);
  CHECK(from_table.log_level == plain.log_level);
  CHECK(from_table.warm_executables == plain.warm_executables);
}

TEST_CASE("settings_precedence_flag_env_file_default", "[settings]") {
  TempDir dir;
  dir.WriteFile("ninfd.toml",
                "port = 4000\n"
                "slots = 3\n"
                "queue_limit = 7\n"
                "listen = \"0.0.0.0\"\n");
  std::string cfg = dir.Join("ninfd.toml");
  std::map<std::string, std::string> env = {{"NINF_PORT", "5000"}, {"NINF_SLOTS", "4"}};

  Run r = Parse({"--config", cfg, "--port", "6000"}, env);
  REQUIRE(r.status.ok());
  CHECK(r.inv.settings.port == 6000);      // flag beats env and file
  CHECK(r.inv.settings.slots == 4);        // env beats file
  CHECK(r.inv.settings.queue_limit == 7);  // file beats default
  CHECK(r.inv.settings.listen == "0.0.0.0");
  CHECK(r.inv.settings.grace_seconds == 10);  // default

  // NINF_CONFIG names the file when --config does not.
  env["NINF_CONFIG"] = cfg;
  r = Parse({}, env);
  REQUIRE(r.status.ok());
  CHECK(r.inv.settings.queue_limit == 7);
}

TEST_CASE("settings_bounds_and_types", "[settings]") {
  Run r = Parse({"--port", "70000"});
  CHECK(r.status.code() == NINF_ERR_INVALID_ARGUMENT);
  CHECK_THAT(r.status.message(), Catch::Contains("--port") && Catch::Contains("65535"));

  r = Parse({}, {{"NINF_SLOTS", "-1"}});
  CHECK(r.status.code() == NINF_ERR_INVALID_ARGUMENT);
  CHECK_THAT(r.status.message(), Catch::Contains("NINF_SLOTS"));

  r = Parse({"--grace-seconds", "ten"});
  CHECK_THAT(r.status.message(), Catch::Contains("not an integer"));

  r = Parse({"--log-level", "loud"});
  CHECK_THAT(r.status.message(), Catch::Contains("is not a log level"));

  r = Parse({"--max-connections", "0"});
  CHECK_FALSE(r.status.ok());

  r = Parse({"--warm-executables", "65"});
  CHECK_THAT(r.status.message(), Catch::Contains("--warm-executables") && Catch::Contains("64"));
  r = Parse({"--warm-executables", "0"});
  REQUIRE(r.status.ok());
  CHECK(r.inv.settings.warm_executables == 0);
  r = Parse({}, {{"NINF_WARM_EXECUTABLES", "4"}});
  REQUIRE(r.status.ok());
  CHECK(r.inv.settings.warm_executables == 4);

  r = Parse({"--no-such-flag"});
  CHECK(r.status.code() == NINF_ERR_INVALID_ARGUMENT);
  CHECK_THAT(r.status.message(), Catch::Contains("unknown option --no-such-flag"));
}

TEST_CASE("settings_errors_say_what_to_give", "[settings]") {
  // The value, the setting and the accepted range, whatever the source.
  Run r = Parse({"--grace-seconds", "ten"});
  CHECK_THAT(r.status.message(), Catch::Contains("--grace-seconds") &&
                                     Catch::Contains("grace_seconds = 'ten'") &&
                                     Catch::Contains("give one in [0, "));
  r = Parse({}, {{"NINF_INSECURE", "maybe"}});
  CHECK_THAT(r.status.message(),
             Catch::Contains("NINF_INSECURE") && Catch::Contains("is not true or false"));
  r = Parse({"--log-level", "loud"});
  CHECK_THAT(r.status.message(), Catch::Contains("give trace, debug"));
}

TEST_CASE("settings_near_miss_flags_and_keys_get_a_suggestion", "[settings]") {
  Run r = Parse({"--prot", "3"});
  CHECK(r.status.code() == NINF_ERR_INVALID_ARGUMENT);
  CHECK_THAT(r.status.message(), Catch::Contains("unknown option --prot (did you mean --port?)"));
  r = Parse({"--wram-executables=2", "--port", "1"});
  CHECK_THAT(r.status.message(), Catch::Contains("did you mean --warm-executables?"));
  // Nothing near: no guess.
  r = Parse({"--zzzzzzzz"});
  CHECK_THAT(r.status.message(), !Catch::Contains("did you mean"));
  TempDir dir;
  dir.WriteFile("k.toml", "port = 1\nslotz = 2\n");
  r = Parse({"--config", dir.Join("k.toml")});
  CHECK_THAT(r.status.message(),
             Catch::Contains("k.toml:2") && Catch::Contains("did you mean 'slots'?"));
}

TEST_CASE("settings_byte_sizes", "[settings]") {
  CHECK(Parse({"--max-call-bytes", "512M"}).inv.settings.max_call_bytes == (int64_t{512} << 20));
  CHECK(Parse({"--max-call-bytes", "2GiB"}).inv.settings.max_call_bytes == (int64_t{2} << 30));
  CHECK(Parse({"--max-call-bytes", "4096"}).inv.settings.max_call_bytes == 4096);
  CHECK(Parse({"--max-call-bytes", "0"}).inv.settings.max_call_bytes == 0);
  CHECK_FALSE(Parse({"--max-call-bytes", "12X"}).status.ok());
  CHECK_FALSE(Parse({"--max-call-bytes", "99999999999T"}).status.ok());  // overflows
}

TEST_CASE("settings_config_file_errors", "[settings]") {
  TempDir dir;
  SECTION("unknown key") {
    dir.WriteFile("a.toml", "port = 1\nslotz = 2\n");
    Run r = Parse({"--config", dir.Join("a.toml")});
    CHECK(r.status.code() == NINF_ERR_INVALID_ARGUMENT);
    CHECK_THAT(r.status.message(), Catch::Contains("slotz") && Catch::Contains(":2"));
  }
  SECTION("wrong type") {
    dir.WriteFile("b.toml", "listen = 5\n");
    CHECK_THAT(Parse({"--config", dir.Join("b.toml")}).status.message(),
               Catch::Contains("must be a string"));
  }
  SECTION("value out of bounds names the file") {
    dir.WriteFile("c.toml", "port = 123456\n");
    CHECK_THAT(Parse({"--config", dir.Join("c.toml")}).status.message(), Catch::Contains("c.toml"));
  }
  SECTION("a bad value names the file, the line and the key") {
    dir.WriteFile("bad2.toml", "slots = 2\nport = \"two\"\n");
    CHECK_THAT(
        Parse({"--config", dir.Join("bad2.toml")}).status.message(),
        Catch::Contains("bad2.toml:2: port = 'two' is not an integer: give one in [0, 65535]"));
  }
  SECTION("syntax error") {
    dir.WriteFile("d.toml", "port = = 1\n");
    CHECK_FALSE(Parse({"--config", dir.Join("d.toml")}).status.ok());
  }
  SECTION("missing file") { CHECK_FALSE(Parse({"--config", dir.Join("none.toml")}).status.ok()); }
  SECTION("byte sizes as strings") {
    dir.WriteFile("e.toml", "max_call_bytes = \"1G\"\n");
    CHECK(Parse({"--config", dir.Join("e.toml")}).inv.settings.max_call_bytes ==
          (int64_t{1} << 30));
  }
}

// `registry` is a list (issue 31): the flag repeated, ':' in the variable,
// an array in the file; all three end as the same ':'-joined value.
TEST_CASE("settings_registry_is_a_list", "[settings]") {
  CHECK(Parse({"--registry", "stdlib", "--registry", "/site"}).inv.settings.registry ==
        "stdlib:/site");
  CHECK(Parse({"--registry=/a:/b", "--registry", "/c"}).inv.settings.registry == "/a:/b:/c");
  CHECK(Parse({}, {{"NINF_REGISTRY", "stdlib:/site"}}).inv.settings.registry == "stdlib:/site");
  // A flag still beats the variable: the whole list, not one entry.
  CHECK(Parse({"--registry", "/x"}, {{"NINF_REGISTRY", "stdlib:/site"}}).inv.settings.registry ==
        "/x");

  TempDir dir;
  dir.WriteFile("list.toml", "registry = [\"stdlib\", \"/srv/site\"]\n");
  Run r = Parse({"--config", dir.Join("list.toml")});
  REQUIRE(r.status.ok());
  CHECK(r.inv.settings.registry == "stdlib:/srv/site");
  dir.WriteFile("one.toml", "registry = \"/srv/site\"\n");
  CHECK(Parse({"--config", dir.Join("one.toml")}).inv.settings.registry == "/srv/site");
  dir.WriteFile("empty.toml", "registry = []\n");
  CHECK(Parse({"--config", dir.Join("empty.toml")}).inv.settings.registry == "stdlib");

  // Refused, each with the reason.
  CHECK_THAT(Parse({}, {{"NINF_REGISTRY", "/a::/b"}}).status.message(),
             Catch::Contains("NINF_REGISTRY: registry = '/a::/b' has an empty entry"));
  CHECK_THAT(Parse({"--registry", "/a:"}).status.message(),
             Catch::Contains("--registry: registry = '/a:' has an empty entry"));
  dir.WriteFile("colon.toml", "registry = [\"/a:b\"]\n");
  CHECK_THAT(Parse({"--config", dir.Join("colon.toml")}).status.message(),
             Catch::Contains("colon.toml:1: 'registry' entry '/a:b' contains ':'"));
  dir.WriteFile("number.toml", "registry = [1]\n");
  CHECK_THAT(Parse({"--config", dir.Join("number.toml")}).status.message(),
             Catch::Contains("'registry' must list strings"));
  dir.WriteFile("int.toml", "registry = 1\n");
  CHECK_THAT(Parse({"--config", dir.Join("int.toml")}).status.message(),
             Catch::Contains("'registry' must be a string or an array of strings"));
  std::string many;
  for (int i = 0; i < 65; ++i) many += (i ? ":/d" : "/d") + std::to_string(i);
  CHECK_THAT(Parse({}, {{"NINF_REGISTRY", many}}).status.message(),
             Catch::Contains("lists 65 paths, more than the 64 allowed"));
}

TEST_CASE("settings_shipped_example_config_parses", "[settings]") {
  // config/ninfd.toml documents every key; it must stay loadable.
  Run r = Parse({"--config", NINF_EXAMPLE_CONFIG});
  REQUIRE(r.status.ok());
  CHECK(r.inv.settings.port == 3000);
  CHECK(r.inv.settings.warm_executables == 1);
  ninf::test::CheckDocumentsEveryKey(NINF_EXAMPLE_CONFIG, SettingsTable());
}

TEST_CASE("settings_booleans", "[settings]") {
  TempDir dir;
  CHECK_FALSE(Parse({}).inv.settings.insecure);
  CHECK(Parse({"--insecure"}).inv.settings.insecure);
  CHECK_FALSE(Parse({"--insecure=false"}).inv.settings.insecure);
  dir.WriteFile("b.toml", "insecure = true\n");
  CHECK(Parse({"--config", dir.Join("b.toml")}).inv.settings.insecure);
  dir.WriteFile("s.toml", "insecure = \"yes\"\n");
  Run r = Parse({"--config", dir.Join("s.toml")});
  CHECK(r.status.code() == NINF_ERR_INVALID_ARGUMENT);
  CHECK_THAT(r.status.message(), Catch::Contains("true or false"));
  for (const char *raw : {"true", "1", "yes"}) {
    Settings s;
    REQUIRE(ApplySetting(*FindSetting("insecure"), raw, "NINF_INSECURE", &s).ok());
    CHECK(s.insecure);
  }
  Settings s;
  ninf::Status st = ApplySetting(*FindSetting("insecure"), "maybe", "NINF_INSECURE", &s);
  CHECK(st.code() == NINF_ERR_INVALID_ARGUMENT);
  CHECK_THAT(st.message(), Catch::Contains("NINF_INSECURE"));
}

TEST_CASE("settings_help_version_status", "[settings]") {
  Run r = Parse({"--help"});
  REQUIRE(r.status.ok());
  CHECK(r.inv.exit_now);
  for (const SettingSpec &spec : SettingsTable()) {
    CHECK_THAT(r.inv.output, Catch::Contains(FlagName(spec)));
    CHECK_THAT(r.inv.output, Catch::Contains(EnvName(spec)));
  }
  r = Parse({"--version"});
  CHECK(r.inv.exit_now);
  CHECK_THAT(r.inv.output, Catch::StartsWith("ninfd "));
  CHECK(Parse({"--list"}).inv.list);
  r = Parse({"--status", "--server", "localhost:1234"});
  CHECK(r.inv.status);
  CHECK(r.inv.status_server == "localhost:1234");
}

TEST_CASE("settings_names", "[settings]") {
  for (const SettingSpec &spec : SettingsTable()) {
    if (std::string(spec.name) == "threads_per_job") {
      CHECK(EnvName(spec) == "NINF_THREADS_PER_JOB");
      CHECK(FlagName(spec) == "--threads-per-job");
    }
  }
}

TEST_CASE("settings_reload_applies_live_keys_and_names_the_rest", "[settings]") {
  Settings running, fresh;
  fresh.call_wall_seconds = 5;
  fresh.port = 4000;
  fresh.function_limits["ep"] = {{"wall_seconds", int64_t{9}}};
  CHECK(ChangedSettings(running, fresh) ==
        std::vector<std::string>{"port", "call_wall_seconds", "limits"});
  CHECK(AppliesLive("call_wall_seconds"));
  CHECK(AppliesLive("limits"));
  CHECK_FALSE(AppliesLive("port"));
  CHECK_FALSE(AppliesLive("slots"));
  Settings next = LiveSettings(running, fresh);
  CHECK(next.call_wall_seconds == 5);
  CHECK(next.port == 3000);  // kept until a restart
  CHECK(next.LimitsOf("ep").wall_seconds == 9);
  // The 39 live keys of docs/server.md are all keys of the table (a typo in
  // the list would leave one out).
  int live = 0;
  for (const SettingSpec &spec : SettingsTable()) live += AppliesLive(spec.name);
  CHECK(live == 39);
}

TEST_CASE("settings_metrics_address", "[settings]") {
  ninf::HostPort at;
  REQUIRE(ParseMetricsAddress("9464", &at).ok());
  CHECK(at.Key() == "127.0.0.1:9464");  // loopback unless told otherwise
  REQUIRE(ParseMetricsAddress("10.1.0.5:9464", &at).ok());
  CHECK(at.Key() == "10.1.0.5:9464");
  REQUIRE(ParseMetricsAddress("0", &at).ok());
  CHECK(at.port == 0);
  for (const char *bad : {"x", "host:", "99999", "unix:/tmp/m"}) {
    INFO(bad);
    CHECK_THAT(ParseMetricsAddress(bad, &at).message(), Catch::Contains("metrics = "));
  }
  // ninfd refuses to start on it: the check runs at start (Server::Start).
  CHECK_FALSE(ParseMetricsAddress("9464x", &at).ok());
}

// Issue 43: beyond loopback the endpoint is HTTPS when the daemon has TLS,
// plain HTTP there only under a waiver, and refused otherwise.
TEST_CASE("settings_metrics_https_beyond_loopback", "[settings]") {
  using ninf::daemon::MetricsNeedsHttps;
  bool https = true;
  REQUIRE(MetricsNeedsHttps({.listen = "127.0.0.1", .tls = true}, &https).ok());
  CHECK_FALSE(https);  // a local Prometheus speaks HTTP
  REQUIRE(MetricsNeedsHttps({.listen = "10.1.0.5", .tls = true}, &https).ok());
  CHECK(https);
  REQUIRE(MetricsNeedsHttps({.listen = "10.1.0.5", .tls = false, .plaintext = true}, &https).ok());
  CHECK_FALSE(https);
  ninf::Status st = MetricsNeedsHttps({.listen = "10.1.0.5", .key = true, .tls = false}, &https);
  CHECK(st.code() == NINF_ERR_CONFIG);
  CHECK_THAT(st.message(),
             Catch::Contains("refusing to serve metrics on 10.1.0.5 over plain HTTP") &&
                 Catch::Contains("tls_cert") && Catch::Contains("--allow-plaintext"));
}

// A settings file that cannot be read says why, with strerror (issue 31:
// it was "path:0:0: File could not be opened for reading"); a TOML error
// keeps its line and column.
TEST_CASE("settings_file_errors_name_the_cause", "[settings]") {
  Run r = Parse({"--config", "/nonexistent.toml"});
  CHECK(r.status.code() == NINF_ERR_INVALID_ARGUMENT);
  CHECK(r.status.message() ==
        "/nonexistent.toml: cannot open the settings file: No such file or directory");
  TempDir dir;
  r = Parse({"--config", dir.path()});  // a folder
  CHECK(r.status.code() == NINF_ERR_INVALID_ARGUMENT);
  CHECK(r.status.message() == dir.path() + ": cannot read the settings file: Is a directory");
  const std::string bad = dir.Join("bad.toml");
  std::ofstream(bad) << "port = 4000\nslots = = 2\n";
  r = Parse({"--config", bad});
  CHECK(r.status.code() == NINF_ERR_INVALID_ARGUMENT);
  CHECK_THAT(r.status.message(), Catch::StartsWith(bad + ":2:"));
  // NINF_CONFIG the same.
  r = Parse({}, {{"NINF_CONFIG", "/nonexistent.toml"}});
  CHECK_THAT(r.status.message(), Catch::Contains("No such file or directory"));
}
