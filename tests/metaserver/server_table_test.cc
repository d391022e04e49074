// Unit tests of ninf-meta's server table (metaserver/server_table.h):
// leases, re-registration, reservations reconciled against reports, and the
// candidates a placement sees.
#include "metaserver/server_table.h"

#include <catch2/catch.hpp>

using namespace ninf::meta;

namespace {

Registration Reg(const std::string &id, const std::string &address, int slots = 2) {
  Registration r;
  r.id = id;
  r.address = address;
  r.site = "s";
  r.slots = slots;
  r.flops_per_second = 1e9;
  r.lease_seconds = 3;
  r.functions = {"dgesv", "ep"};
  return r;
}

const Link kFallback{0.001, 1e8};

}  // namespace

TEST_CASE("table_candidates_serve_the_function_minus_excluded", "[table]") {
  ServerTable t;
  t.Register(Reg("a", "h:1"), 0);
  t.Register(Reg("b", "h:2"), 0);
  Registration c = Reg("c", "h:3");
  c.functions = {"ep"};
  t.Register(c, 0);
  CHECK(t.Candidates("dgesv", "site", {}, kFallback).candidates.size() == 2);
  CHECK(t.Candidates("ep", "site", {}, kFallback).candidates.size() == 3);
  std::vector<std::string> exclude = {"a"};
  ServerTable::Choices ch = t.Candidates("dgesv", "site", exclude, kFallback);
  REQUIRE(ch.candidates.size() == 1);
  CHECK(ch.servers[0]->reg.id == "b");
  CHECK(ch.candidates[0].server == 0);
  CHECK(t.Candidates("nothing", "site", {}, kFallback).candidates.empty());
}

TEST_CASE("table_links_are_per_site_and_fall_back_when_unknown", "[table]") {
  ServerTable t;
  t.Register(Reg("a", "h:1"), 0);
  // A two-size probe, 1 kB in 10.01 ms and 1 MB in 20 ms:
  // latency ~10 ms, bandwidth ~1e8 B/s.
  REQUIRE(t.LinkTo("east", "h:1").AddProbe(1000, 0.01001, 1000000, 0.02, 1));
  ServerTable::Choices east = t.Candidates("dgesv", "east", {}, kFallback);
  REQUIRE(east.candidates.size() == 1);
  CHECK(east.link_known[0]);
  CHECK(east.candidates[0].link.latency_seconds == Approx(0.01).epsilon(0.01));
  CHECK(east.candidates[0].link.bandwidth_bytes_per_second == Approx(1e8).epsilon(0.01));
  ServerTable::Choices west = t.Candidates("dgesv", "west", {}, kFallback);
  CHECK_FALSE(west.link_known[0]);
  CHECK(west.candidates[0].link.bandwidth_bytes_per_second == kFallback.bandwidth_bytes_per_second);
}

TEST_CASE("table_reservations_are_covered_by_reports_and_outcomes", "[table]") {
  ServerTable t;
  t.Register(Reg("a", "h:1"), 0);
  LoadSample first;
  first.calls_admitted = 10;
  REQUIRE(t.Report("a", first, 0.5));
  t.Reserve("a", 1, 2.0, 1);
  t.Reserve("a", 2, 3.0, 1);
  t.Reserve("a", 3, 4.0, 1);
  ServerLoad load = t.Find("a")->Load();
  CHECK(load.reserved_calls == 3);
  CHECK(load.reserved_seconds == Approx(9.0));
  CHECK(t.Find("a")->placements == 3);

  // One more call reached the server: the oldest reservation is covered.
  LoadSample second;
  second.calls_admitted = 11;
  second.running = 1;
  REQUIRE(t.Report("a", second, 1.5));
  load = t.Find("a")->Load();
  CHECK(load.running == 1);
  CHECK(load.reserved_calls == 2);
  CHECK(load.reserved_seconds == Approx(7.0));

  // An outcome releases its own reservation.
  t.Release("a", 3);
  CHECK(t.Find("a")->Load().reserved_seconds == Approx(3.0));

  // One nobody covers ends by itself.
  t.set_reservation_seconds(10);
  LoadSample third = second;
  REQUIRE(t.Report("a", third, 20));
  CHECK(t.Find("a")->Load().reserved_calls == 0);
}

TEST_CASE("table_lease_expiry_and_reregistration", "[table]") {
  ServerTable t;
  t.Register(Reg("a", "h:1"), 0);
  t.Register(Reg("b", "h:2"), 0);
  REQUIRE(t.Report("a", LoadSample{}, 2.5));
  std::vector<std::string> gone = t.Expire(4);  // b last heard at 0, lease 3 s
  REQUIRE(gone == std::vector<std::string>{"b"});
  CHECK(t.size() == 1);
  CHECK_FALSE(t.Report("b", LoadSample{}, 4));  // must register again

  // A restarted ninfd (new id, same address) replaces its old entry but
  // keeps the link history, which is keyed by address.
  REQUIRE(t.LinkTo("s", "h:1").AddProbe(1000, 0.002, 1000000, 0.012, 1));
  CHECK(t.Register(Reg("a2", "h:1"), 5));
  CHECK(t.Find("a") == nullptr);
  REQUIRE(t.Find("a2") != nullptr);
  CHECK(t.Candidates("dgesv", "s", {}, kFallback).link_known[0]);

  CHECK(t.Drop("a2"));
  CHECK_FALSE(t.Drop("a2"));
  CHECK(t.size() == 0);
}

TEST_CASE("table_function_reports_refine_speed_and_warmth", "[table]") {
  ServerTable t;
  t.Register(Reg("a", "h:1"), 0);
  LoadSample s;
  s.functions.push_back({"dgesv", 4, 0.5, 2.5e10, true});
  REQUIRE(t.Report("a", s, 1));
  Candidate c = t.Candidates("dgesv", "s", {}, kFallback).candidates.at(0);
  CHECK(c.flops_per_second == 2.5e10);  // measured for the function, not the calibration
  CHECK(c.service_seconds == 0.5);
  CHECK(c.warm);
  Candidate e = t.Candidates("ep", "s", {}, kFallback).candidates.at(0);
  CHECK(e.flops_per_second == 1e9);  // not measured yet: the calibration
  CHECK_FALSE(e.warm);
}
