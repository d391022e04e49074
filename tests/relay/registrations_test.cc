// ninf-relay's registration and bridging decisions (relay/registrations.h),
// case by case, without sockets or root. Peers are the addresses of local
// objects: the table never dereferences them.
#include "relay/registrations.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>

using ninf::relay::Departure;
using ninf::relay::Peer;
using ninf::relay::PendingDial;
using ninf::relay::Registered;
using ninf::relay::Registrant;
using ninf::relay::RegistrationLimits;
using ninf::relay::Registrations;

namespace {

struct Peers {
  int slots[16] = {};
  Peer operator[](int i) { return &slots[i]; }
};

RegistrationLimits SmallLimits() {
  return RegistrationLimits{.max_servers = 2,
                            .max_pending_dials = 2,
                            .max_bridges_per_server = 3,
                            .dial_timeout_ms = 1000};
}

}  // namespace

TEST_CASE("relay_register_fresh_then_keepalive", "[relay_registrations]") {
  Peers p;
  Registrations book(SmallLimits());
  Registered r;
  REQUIRE(book.Register({"site-a", "", ""}, p[0], 0, &r).ok());
  CHECK(r.fresh);
  CHECK(r.replaced == nullptr);
  CHECK(book.control("site-a") == p[0]);
  // The keep-alive: the same name again on the same connection.
  REQUIRE(book.Register({"site-a", "", ""}, p[0], 0, &r).ok());
  CHECK_FALSE(r.fresh);
  CHECK(r.replaced == nullptr);
  CHECK(book.servers() == 1);
}

TEST_CASE("relay_register_one_name_per_connection", "[relay_registrations]") {
  Peers p;
  Registrations book(SmallLimits());
  Registered r;
  REQUIRE(book.Register({"site-a", "", ""}, p[0], 0, &r).ok());
  ninf::Status st = book.Register({"site-b", "", ""}, p[0], 0, &r);
  CHECK(st.code() == NINF_ERR_PROTOCOL);
  CHECK(st.message() == "a control connection registers one name ('site-a'), not 'site-b'");
  CHECK(book.control("site-b") == nullptr);
  CHECK(book.servers() == 1);
}

TEST_CASE("relay_register_caps_max_servers", "[relay_registrations]") {
  Peers p;
  Registrations book(SmallLimits());
  Registered r;
  REQUIRE(book.Register({"a", "", ""}, p[0], 0, &r).ok());
  REQUIRE(book.Register({"b", "", ""}, p[1], 0, &r).ok());
  ninf::Status st = book.Register({"c", "", ""}, p[2], 0, &r);
  CHECK(st.code() == NINF_ERR_SERVER);
  CHECK(st.message() == "the relay has max_servers (2) servers registered");
  // A name already held is no new server: its replacement is not capped.
  REQUIRE(book.Register({"b", "", ""}, p[3], 0, &r).ok());
  CHECK(r.replaced == p[1]);
  // A name freed makes room.
  CHECK(book.Closed(p[0]).name == "a");
  CHECK(book.Register({"c", "", ""}, p[2], 0, &r).ok());
}

TEST_CASE("relay_register_newest_wins", "[relay_registrations]") {
  Peers p;
  Registrations book(SmallLimits());
  Registered r;
  REQUIRE(book.Register({"site-a", "", ""}, p[0], 0, &r).ok());
  REQUIRE(book.Register({"site-a", "", ""}, p[1], 0, &r).ok());
  CHECK(r.fresh);
  CHECK(r.replaced == p[0]);
  CHECK(book.control("site-a") == p[1]);
  // The replaced connection closing later leaves the new one registered.
  Departure gone = book.Closed(p[0]);
  CHECK(gone.name.empty());
  CHECK(book.control("site-a") == p[1]);
  // And the replaced connection holds no name any more: it may register one.
  REQUIRE(book.Register({"site-b", "", ""}, p[0], 0, &r).ok());
  CHECK(r.fresh);
}

// Hostile finding 2 (issue 43): a name is the key's that registered it.
TEST_CASE("relay_register_name_belongs_to_its_key", "[relay_registrations]") {
  Peers p;
  Registrations book(SmallLimits());
  Registered r;
  REQUIRE(book.Register({"site-a", "\x0a\xff", "one"}, p[0], 1000, &r).ok());
  ninf::Status st = book.Register({"site-a", "key-b", "two"}, p[1], 3500, &r);
  CHECK(st.code() == NINF_ERR_CONFIG);
  CHECK(st.message() ==
        "relay name 'site-a' is registered by key 0aff (heard from 2 s ago), not 6b65792d62: a "
        "name belongs to the key that registered it");
  CHECK(book.control("site-a") == p[0]);
  // Even once the holder went quiet: another key waits until it is gone.
  CHECK(book.Register({"site-a", "key-b", "two"}, p[1], 1000 + 3600000, &r).code() ==
        NINF_ERR_CONFIG);
  // Gone, the name is free for anyone.
  (void)book.Closed(p[0]);
  CHECK(book.Register({"site-a", "key-b", "two"}, p[1], 1000, &r).ok());
  CHECK(ninf::relay::KeyIdText("") == "none");
  CHECK(book.control("site-a") == p[1]);
}

// A second ninfd with the same key and name (a cloned host) is refused while
// the first is live; the same ninfd reconnecting, or a successor once the
// holder went quiet (a crashed host), takes the name over.
TEST_CASE("relay_register_one_live_instance_per_name", "[relay_registrations]") {
  Peers p;
  RegistrationLimits limits = SmallLimits();
  limits.live_ms = 20000;
  Registrations book(limits);
  Registered r;
  REQUIRE(book.Register({"site-a", "k", "first"}, p[0], 0, &r).ok());
  REQUIRE(book.Register({"site-a", "k", "first"}, p[0], 15000, &r).ok());  // its keep-alive
  ninf::Status st = book.Register({"site-a", "k", "clone"}, p[1], 30000, &r);
  CHECK(st.code() == NINF_ERR_CONFIG);
  CHECK(st.message() ==
        "relay name 'site-a' is registered by another ninfd (heard from 15 s ago): give each "
        "ninfd its own relay_name (the default is the host name, which cloned hosts share)");
  CHECK(book.control("site-a") == p[0]);
  // The first one reconnecting on a new connection replaces its old one.
  REQUIRE(book.Register({"site-a", "k", "first"}, p[2], 31000, &r).ok());
  CHECK(r.replaced == p[0]);
  // Quiet for longer than live_ms: a successor takes over.
  REQUIRE(book.Register({"site-a", "k", "next"}, p[3], 31000 + 20001, &r).ok());
  CHECK(r.replaced == p[2]);
  CHECK(book.control("site-a") == p[3]);
}

// Hostile finding 3: a dial token counts only with the registering key, and
// a wrong presentation does not spend it.
TEST_CASE("relay_dial_token_needs_the_servers_key", "[relay_registrations]") {
  Peers p;
  Registrations book(SmallLimits());
  Registered r;
  REQUIRE(book.Register({"site-a", "key-a", "one"}, p[0], 0, &r).ok());
  REQUIRE(book.Admit("site-a").ok());
  book.Wait("t1", "site-a", p[5], 0);
  CHECK_FALSE(book.TakeDial("t1", "").has_value());
  CHECK_FALSE(book.TakeDial("t1", "key-b").has_value());
  CHECK(book.pending("site-a") == 1);
  std::optional<PendingDial> dial = book.TakeDial("t1", "key-a");
  REQUIRE(dial.has_value());
  CHECK(dial->client == p[5]);
  CHECK(book.pending("site-a") == 0);
}

// A server's control connection closed while a bridge of it still ran; the
// restarted ninfd registers the name again. (The relay used to take the
// missing control connection for one to replace and dereference it.)
TEST_CASE("relay_register_again_while_bridges_outlive_control", "[relay_registrations]") {
  Peers p;
  Registrations book(SmallLimits());
  Registered r;
  REQUIRE(book.Register({"site-a", "", ""}, p[0], 0, &r).ok());
  REQUIRE(book.Admit("site-a").ok());
  book.Wait("t1", "site-a", p[5], 0);
  REQUIRE(book.TakeDial("t1", "").has_value());
  book.BridgeOpened("site-a");
  CHECK(book.Closed(p[0]).name == "site-a");
  CHECK(book.bridges("site-a") == 1);
  CHECK(book.control("site-a") == nullptr);
  CHECK(book.Admit("site-a").code() == NINF_ERR_CONNECT);
  REQUIRE(book.Register({"site-a", "", ""}, p[1], 0, &r).ok());
  CHECK(r.fresh);
  CHECK(r.replaced == nullptr);
  CHECK(book.bridges("site-a") == 1);
  book.BridgeClosed("site-a");
  CHECK(book.bridges("site-a") == 0);
  CHECK(book.control("site-a") == p[1]);
}

TEST_CASE("relay_admit_unknown_server", "[relay_registrations]") {
  Registrations book(SmallLimits());
  ninf::Status st = book.Admit("nobody");
  CHECK(st.code() == NINF_ERR_CONNECT);
  CHECK(st.message() ==
        "no server named 'nobody' is registered at this relay (is its ninfd running with "
        "--reverse --relay pointing here?)");
}

TEST_CASE("relay_admit_caps_pending_dials_per_server", "[relay_registrations]") {
  Peers p;
  Registrations book(SmallLimits());
  Registered r;
  REQUIRE(book.Register({"a", "", ""}, p[0], 0, &r).ok());
  REQUIRE(book.Register({"b", "", ""}, p[1], 0, &r).ok());
  REQUIRE(book.Admit("a").ok());
  CHECK(book.Wait("t1", "a", p[4], 0) == p[0]);
  REQUIRE(book.Admit("a").ok());
  book.Wait("t2", "a", p[5], 0);
  ninf::Status st = book.Admit("a");
  CHECK(st.code() == NINF_ERR_SERVER);
  CHECK(st.message() ==
        "server 'a' has 2 clients waiting for it (max_pending_dials) at this relay: try again "
        "later");
  // Per server: the other one still admits.
  CHECK(book.Admit("b").ok());
  // A dial-back frees the place.
  REQUIRE(book.TakeDial("t1", "").has_value());
  CHECK(book.Admit("a").ok());
}

TEST_CASE("relay_admit_caps_bridges_per_server", "[relay_registrations]") {
  Peers p;
  Registrations book(SmallLimits());
  Registered r;
  REQUIRE(book.Register({"a", "", ""}, p[0], 0, &r).ok());
  for (const char *token : {"t1", "t2", "t3"}) {
    REQUIRE(book.Admit("a").ok());
    book.Wait(token, "a", p[4], 0);
    REQUIRE(book.TakeDial(token, "").has_value());
    book.BridgeOpened("a");
  }
  ninf::Status st = book.Admit("a");
  CHECK(st.code() == NINF_ERR_SERVER);
  CHECK(st.message() ==
        "server 'a' has 3 relayed connections (max_bridges_per_server) at this relay: try "
        "again later");
  book.BridgeClosed("a");
  REQUIRE(book.Admit("a").ok());
  // Waiting clients count against the bridges too.
  book.Wait("t4", "a", p[5], 0);
  CHECK(book.Admit("a").code() == NINF_ERR_SERVER);
}

TEST_CASE("relay_dial_token_is_good_once", "[relay_registrations]") {
  Peers p;
  Registrations book(SmallLimits());
  Registered r;
  REQUIRE(book.Register({"a", "", ""}, p[0], 0, &r).ok());
  book.Wait("token", "a", p[4], 100);
  CHECK(book.pending("a") == 1);
  CHECK_FALSE(book.TakeDial("other", "").has_value());
  std::optional<PendingDial> dial = book.TakeDial("token", "");
  REQUIRE(dial.has_value());
  CHECK(dial->server == "a");
  CHECK(dial->client == p[4]);
  CHECK(dial->deadline_ms == 1100);
  CHECK(book.pending("a") == 0);
  CHECK_FALSE(book.TakeDial("token", "").has_value());
}

TEST_CASE("relay_dial_timeout_expires_late_clients_only", "[relay_registrations]") {
  Peers p;
  Registrations book(SmallLimits());
  Registered r;
  REQUIRE(book.Register({"a", "", ""}, p[0], 0, &r).ok());
  book.Wait("early", "a", p[4], 0);    // deadline 1000
  book.Wait("later", "a", p[5], 500);  // deadline 1500
  CHECK(book.Expire(999).empty());
  auto late = book.Expire(1000);
  REQUIRE(late.size() == 1);
  CHECK(late[0].client == p[4]);
  CHECK(book.pending("a") == 1);
  CHECK_FALSE(book.TakeDial("early", "").has_value());  // expired: its token is spent
  CHECK(book.Expire(1499).empty());
  CHECK(book.Expire(1500).size() == 1);
  CHECK(book.pending("a") == 0);
}

TEST_CASE("relay_control_closed_orphans_waiting_clients", "[relay_registrations]") {
  Peers p;
  Registrations book(SmallLimits());
  Registered r;
  REQUIRE(book.Register({"a", "", ""}, p[0], 0, &r).ok());
  REQUIRE(book.Register({"b", "", ""}, p[1], 0, &r).ok());
  book.Wait("t1", "a", p[4], 0);
  book.Wait("t2", "b", p[5], 0);
  Departure gone = book.Closed(p[0]);
  CHECK(gone.name == "a");
  REQUIRE(gone.orphans.size() == 1);
  CHECK(gone.orphans[0] == p[4]);
  CHECK_FALSE(book.TakeDial("t1", "").has_value());
  CHECK(book.servers() == 1);  // nothing of "a" is left
  CHECK(book.pending("b") == 1);
}

TEST_CASE("relay_waiting_client_gives_up", "[relay_registrations]") {
  Peers p;
  Registrations book(SmallLimits());
  Registered r;
  REQUIRE(book.Register({"a", "", ""}, p[0], 0, &r).ok());
  book.Wait("t1", "a", p[4], 0);
  Departure gone = book.Closed(p[4]);
  CHECK(gone.name.empty());
  CHECK(gone.orphans.empty());
  CHECK(book.pending("a") == 0);
  CHECK_FALSE(book.TakeDial("t1", "").has_value());
  CHECK(book.control("a") == p[0]);
}
