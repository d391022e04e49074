// Unit tests of the users' policy (server/users.h, server/user_policy.h):
// who a connection or a call is, who may call what, the metrics label
// bound, and the checks of the [users.NAME] tables' key files.
#include "daemon/users.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <set>

#include "server/user_policy.h"
#include "tests/server/daemon_fixture.h"

using namespace ninf::server;
using ninf::Status;
using ninf::test::TempDir;

namespace {

std::string KeyFile(const TempDir &dir, const std::string &name, const std::string &keys) {
  const std::string path = dir.Join(name);
  std::ofstream(path, std::ios::trunc) << keys;
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  return path;
}

const std::string kAlice1 = "alice-key-number-one-0123456789";
const std::string kAlice2 = "alice-key-number-two-0123456789";
const std::string kBob = "bob-key-0123456789abcdef";

}  // namespace

TEST_CASE("users_identify_by_key_and_subject", "[users]") {
  TempDir dir;
  UserSpecs users;
  users["alice"] = {.key_file = KeyFile(dir, "a", kAlice1 + "\n" + kAlice2 + "\n"),
                    .groups = {"chem"}};
  users["bob"] = {.key_file = KeyFile(dir, "b", kBob + "\n")};
  users["carol"] = {.cert_subject = "CN=carol,O=site"};
  Principals p;
  REQUIRE(LoadPrincipals("", users, &p).ok());
  CHECK(p.ring.keys.size() == 3);
  using ninf::auth::KeyIdOf;
  // Both of alice's keys are alice (rotation).
  CHECK(Identify(p, {.authenticated = true, .key_id = KeyIdOf(kAlice1)}).user == "alice");
  CHECK(Identify(p, {.authenticated = true, .key_id = KeyIdOf(kAlice2)}).user == "alice");
  CHECK(Identify(p, {.authenticated = true, .key_id = KeyIdOf(kBob)}).user == "bob");
  CHECK(Identify(p, {.peer_subject = "CN=carol,O=site"}).user == "carol");
  CHECK(Identify(p, {.peer_subject = "CN=mallory,O=site"}).user.empty());
  // A key proved wins over a subject.
  CHECK(Identify(
            p, {.authenticated = true, .key_id = KeyIdOf(kBob), .peer_subject = "CN=carol,O=site"})
            .user == "bob");
  CHECK(Knows(p, "alice"));
  CHECK(Knows(p, "carol"));
  CHECK(!Knows(p, "dave"));
  // A key no user holds any more: revoked.
  Identity gone = Identify(p, {.authenticated = true, .key_id = KeyIdOf("some-removed-key-xyz")});
  CHECK(gone.revoked);
  CHECK(gone.user.empty());
}

TEST_CASE("users_global_key_file_is_default", "[users]") {
  TempDir dir;
  Principals p;
  REQUIRE(LoadPrincipals(KeyFile(dir, "k", kBob + "\n"), {}, &p).ok());
  CHECK(Identify(p, {.authenticated = true, .key_id = ninf::auth::KeyIdOf(kBob)}).user ==
        kDefaultUser);
  UserSpecs clash;
  clash["default"] = {.cert_subject = "CN=x"};
  Status st = LoadPrincipals(KeyFile(dir, "k2", kAlice1 + "\n"), clash, &p);
  CHECK(st.code() == NINF_ERR_CONFIG);
  CHECK(st.message().find("users.default") != std::string::npos);
}

TEST_CASE("users_load_errors_name_the_table", "[users]") {
  TempDir dir;
  Principals p;
  UserSpecs none;
  none["alice"] = {};
  Status st = LoadPrincipals("", none, &p);
  CHECK(st.code() == NINF_ERR_CONFIG);
  CHECK(st.message().find("users.alice") != std::string::npos);

  UserSpecs missing;
  missing["bob"] = {.key_file = dir.Join("nonexistent")};
  st = LoadPrincipals("", missing, &p);
  CHECK(st.code() == NINF_ERR_CONFIG);
  CHECK(st.message().find("users.bob") != std::string::npos);

  UserSpecs shared;
  shared["alice"] = {.key_file = KeyFile(dir, "a", kAlice1 + "\n")};
  shared["bob"] = {.key_file = KeyFile(dir, "b", kBob + "\n" + kAlice1 + "\n")};
  st = LoadPrincipals("", shared, &p);
  CHECK(st.code() == NINF_ERR_CONFIG);
  CHECK(st.message().find("users.bob") != std::string::npos);
  CHECK(st.message().find("alice") != std::string::npos);

  UserSpecs readable;
  const std::string loose = KeyFile(dir, "loose", kBob + "\n");
  REQUIRE(::chmod(loose.c_str(), 0644) == 0);
  readable["bob"] = {.key_file = loose};
  st = LoadPrincipals("", readable, &p);
  CHECK(st.code() == NINF_ERR_CONFIG);
  CHECK(st.message().find("users.bob") != std::string::npos);
  CHECK(st.message().find("chmod") != std::string::npos);

  UserSpecs subjects;
  subjects["a"] = {.cert_subject = "CN=same"};
  subjects["b"] = {.cert_subject = "CN=same"};
  CHECK(LoadPrincipals("", subjects, &p).code() == NINF_ERR_CONFIG);
}

TEST_CASE("users_allow_lists", "[users]") {
  Principals p;
  p.groups["alice"] = {"chem"};
  p.groups["bob"] = {"phys"};
  const std::vector<std::string> allow = {"carol", "group:chem"};
  CHECK(MayCall(p, "alice", allow));  // by group
  CHECK(!MayCall(p, "bob", allow));   // neither name nor group
  CHECK(MayCall(p, "carol", allow));  // by name (no table of groups needed)
  CHECK(!MayCall(p, "", allow));      // anonymous: only without a list
  CHECK(MayCall(p, "", {}));
  CHECK(MayCall(p, "bob", {}));
  CHECK(!MayCall(p, "chem", allow));  // a group is not a user
  CHECK(!MayCall(p, "group:chem", allow));
}

TEST_CASE("users_metric_label_bound", "[users]") {
  std::set<std::string, std::less<>> seen;
  for (int i = 0; i < 32; ++i) CHECK(UserLabel(&seen, "u" + std::to_string(i), 32) != "other");
  CHECK(UserLabel(&seen, "u32", 32) == "other");
  CHECK(UserLabel(&seen, "u999", 32) == "other");
  CHECK(UserLabel(&seen, "u5", 32) == "u5");  // a labelled user keeps its label
  CHECK(seen.size() == 32);
  CHECK(UserLabel(&seen, "", 64) == "-");
}

TEST_CASE("users_own_stats_label", "[users]") {
  // What a user who is not an operator sees of STATS's user lines: its own
  // label, "other" when it shares that bucket, nothing while it has none.
  std::set<std::string, std::less<>> seen = {"alice", "bob"};
  CHECK(OwnStatsLabel(seen, "alice", 2) == "alice");
  CHECK(OwnStatsLabel(seen, "carol", 2) == "other");  // the labels are all given
  CHECK(OwnStatsLabel(seen, "carol", 3) == "");       // no call yet: no line of its own
  CHECK(seen.size() == 2);                            // asking gives no label out
}

TEST_CASE("users_names", "[users]") {
  CHECK(ValidUserName("alice"));
  CHECK(ValidUserName("a.b-c_9"));
  CHECK(!ValidUserName(""));
  CHECK(!ValidUserName("a b"));
  CHECK(!ValidUserName("a\"b"));
  CHECK(!ValidUserName(std::string(65, 'a')));
}

TEST_CASE("users_policy_revokes_calls_of_a_user_a_reload_removed", "[users]") {
  using ninf::auth::KeyIdOf;
  TempDir dir;
  Settings s;
  const std::string alice = KeyFile(dir, "a", kAlice1 + "\n");
  s.users["alice"] = {{"key_file", alice}};
  s.users["bob"] = {{"key_file", KeyFile(dir, "b", kBob + "\n")}};
  s.function_limits["dgesv"] = {{"allow", std::vector<std::string>{"bob"}}};
  UserPolicy policy(s);
  std::set<std::string> gone;
  REQUIRE(policy.Load(&gone).ok());
  CHECK(gone.empty());
  CHECK(policy.keyed());
  CHECK_FALSE(policy.OfCall("alice", KeyIdOf(kAlice1)).revoked);
  CHECK(policy.OfCall("alice", KeyIdOf(kBob)).revoked);  // bob's key is not alice's
  CHECK(policy.KeyOfCall("alice", KeyIdOf(kAlice1)) != nullptr);
  CHECK(policy.MayRun(policy.OfCall("alice", KeyIdOf(kAlice1)), "echo").ok());
  CHECK(policy.MayRun(policy.OfCall("alice", KeyIdOf(kAlice1)), "dgesv").code() == NINF_ERR_DENIED);
  // A certificate nobody has must still prove a key.
  CHECK(policy.NeedsKey("CN=nobody"));
  // The reload without alice: her calls are revoked, her key proves nothing.
  s.users.erase("alice");
  REQUIRE(policy.Load(&gone).ok());
  CHECK(gone == std::set<std::string>{"alice"});
  CHECK(policy.OfCall("alice", KeyIdOf(kAlice1)).revoked);
  CHECK(policy.MayRun(policy.OfCall("alice", KeyIdOf(kAlice1)), "echo").code() == NINF_ERR_AUTH);
  CHECK(policy.KeyOfCall("alice", KeyIdOf(kAlice1)) == nullptr);
  // A reload whose key file is unsafe changes nothing.
  s.users["carol"] = {{"key_file", dir.Join("missing.key")}};
  CHECK_FALSE(policy.Load(&gone).ok());
  CHECK_FALSE(policy.OfCall("bob", KeyIdOf(kBob)).revoked);
}
