// What each user may do at ninf-meta (metaserver/meta_users.h): the pure
// decisions, case by case.
#include "metaserver/meta_users.h"

#include <catch2/catch.hpp>

using ninf::daemon::Identity;
using ninf::daemon::Principals;
using ninf::meta::MayPlace;
using ninf::meta::MayServe;

namespace {

Principals WithGroups() {
  Principals p;
  p.groups["alice"] = {"chem"};
  p.groups["bob"] = {};
  return p;
}

}  // namespace

TEST_CASE("only key_file's keys (or a daemon without keys) register servers", "[meta_users]") {
  CHECK(MayServe(Identity{.user = ""}).ok());         // no keys: everyone, as before
  CHECK(MayServe(Identity{.user = "default"}).ok());  // ninf-meta's own key_file
  const ninf::Status alice = MayServe(Identity{.user = "alice"});
  CHECK(alice.code() == NINF_ERR_DENIED);
  CHECK(alice.message().find("user 'alice' is a client here") != std::string::npos);
  CHECK(alice.message().find("key_file") != std::string::npos);
  const ninf::Status revoked = MayServe(Identity{.user = "", .revoked = true});
  CHECK(revoked.code() == NINF_ERR_AUTH);
  CHECK(revoked.message().find("ninf-meta") != std::string::npos);
}

TEST_CASE("a known certificate subject needs no key; others do once there are keys",
          "[meta_users]") {
  Principals p;
  CHECK_FALSE(ninf::daemon::NeedsKey(p, ""));  // no keys: nobody proves one
  p.ring.keys.emplace_back();
  p.user_of_subject["CN=carol,O=site"] = "carol";
  CHECK(ninf::daemon::NeedsKey(p, ""));
  CHECK(ninf::daemon::NeedsKey(p, "CN=mallory,O=site"));
  CHECK_FALSE(ninf::daemon::NeedsKey(p, "CN=carol,O=site"));
}

TEST_CASE("a revoked key may ask nothing more", "[meta_users]") {
  CHECK(ninf::meta::MayAsk(Identity{.user = "alice"}).ok());
  CHECK(ninf::meta::MayAsk(Identity{.user = ""}).ok());
  CHECK(ninf::meta::MayAsk(Identity{.user = "", .revoked = true}).code() == NINF_ERR_AUTH);
}

TEST_CASE("a placement follows the function's allow list", "[meta_users]") {
  const Principals p = WithGroups();
  const std::vector<std::string> chem = {"group:chem"};
  CHECK(MayPlace(p, Identity{.user = "bob"}, "echo", {}).ok());  // no list: every user
  CHECK(MayPlace(p, Identity{.user = "alice"}, "echo", chem).ok());
  const ninf::Status bob = MayPlace(p, Identity{.user = "bob"}, "echo", chem);
  CHECK(bob.code() == NINF_ERR_DENIED);
  CHECK(bob.message() ==
        "ninf-meta: user 'bob' may not call 'echo' (the allow list of [limits.echo] in "
        "ninf-meta's config names neither the user nor one of its groups)");
  CHECK(MayPlace(p, Identity{.user = "bob"}, "echo", {"bob"}).ok());
  // The anonymous user passes only an empty list; a revoked key none.
  CHECK(MayPlace(p, Identity{.user = ""}, "echo", chem).code() == NINF_ERR_DENIED);
  CHECK(MayPlace(p, Identity{.user = "alice", .revoked = true}, "echo", {}).code() ==
        NINF_ERR_AUTH);
}
