// ninf-meta's placement policy (metaserver/placement.h) against expectations
// computed by hand.
#include "metaserver/placement.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>

using namespace ninf::meta;

namespace {

constexpr double kMbit = 1e6 / 8;  // bytes per second in one Mbit/s

// dgesv of order n: A (n x n) and b (n) in, the same out (INOUT), 2/3 n^3
// operations.
CallShape Dgesv(int n) {
  const uint64_t bytes = 8ull * n * n + 8ull * n;
  return {2.0 / 3.0 * n * n * n, bytes, bytes};
}

Candidate Server(uint32_t id, int slots, int running, double mbit, double gflops) {
  Candidate c;
  c.server = id;
  c.load.slots = slots;
  c.load.running = running;
  c.link = {0.001, mbit * kMbit};
  c.flops_per_second = gflops * 1e9;
  c.warm = true;
  return c;
}

}  // namespace

TEST_CASE("placement_prediction_adds_every_part", "[placement]") {
  Candidate c;
  c.load = {.slots = 2, .running = 2, .queued = 1, .work_seconds = 6};
  c.link = {0.01, 1e8};
  c.flops_per_second = 1e9;
  c.startup_seconds = 0.5;
  const CallShape call{2e9, 8'000'000, 8'000};
  const Prediction p = Predict(c, call);
  CHECK(p.queue == Approx(3.0));  // 6 s of work over 2 slots, none free
  CHECK(p.latency == Approx(0.01));
  CHECK(p.send == Approx(0.08));
  CHECK(p.compute == Approx(2.0));
  CHECK(p.startup == Approx(0.5));  // no warm executable
  CHECK(p.receive == Approx(8e-5));
  CHECK(p.total() == Approx(5.59008));

  c.warm = true;
  c.load.running = 0;
  c.load.queued = 0;  // a free slot: no wait, whatever the work figure says
  CHECK(Predict(c, call).queue == 0);
  CHECK(Predict(c, call).startup == 0);
}

TEST_CASE("placement_unknown_work_uses_the_service_time", "[placement]") {
  Candidate c = Server(0, 1, 0, 1000, 10);
  c.service_seconds = 0.25;
  CHECK(Predict(c, CallShape{0, 0, 0}).compute == Approx(0.25));
  c.flops_per_second = 0;  // speed unknown, work known: the service time again
  CHECK(Predict(c, CallShape{1e9, 0, 0}).compute == Approx(0.25));
}

TEST_CASE("placement_least_loaded_is_wrong_when_its_link_is_slow", "[placement]") {
  // The seed paper's finding, by hand: an idle server behind 100 Mbit/s and
  // a busy one (one of two slots taken) behind 1 Gbit/s, equally fast.
  // dgesv n = 2000 moves 32.016 MB each way:
  //   idle: 2 x 32.016e6 / 12.5e6 = 5.12 s + 5.33e9 / 20e9 = 0.27 s -> 5.39 s
  //   busy: 2 x 32.016e6 / 125e6  = 0.51 s + 0.27 s                -> 0.78 s
  const Candidate servers[] = {Server(7, 2, 0, 100, 20), Server(9, 2, 1, 1000, 20)};
  const CallShape call = Dgesv(2000);
  CHECK(Predict(servers[0], call).total() == Approx(5.39).epsilon(0.01));
  CHECK(Predict(servers[1], call).total() == Approx(0.78).epsilon(0.01));
  PolicyState state;
  CHECK(Rank(Policy::kCompletion, servers, call, 2, &state) == std::vector<uint32_t>{9, 7});
  CHECK(Rank(Policy::kLoad, servers, call, 2, &state) == std::vector<uint32_t>{7, 9});

  // Still the fast link with both of its slots busy and a 1 s backlog:
  // 0.78 + 1 / 2 = 1.28 s against 5.39 s.
  Candidate full[] = {servers[0], servers[1]};
  full[1].load.running = 2;
  full[1].load.work_seconds = 1.0;
  CHECK(Predict(full[1], call).total() == Approx(1.28).epsilon(0.01));
  CHECK(Rank(Policy::kCompletion, full, call, 1, &state) == std::vector<uint32_t>{9});
}

TEST_CASE("placement_compute_only_calls_go_where_they_finish_first", "[placement]") {
  // EP: no bytes to speak of, so the link does not matter and the faster or
  // less loaded server wins.
  const CallShape ep{4e10, 16, 80};
  Candidate servers[] = {Server(0, 1, 1, 10, 40), Server(1, 1, 0, 10, 20),
                         Server(2, 1, 0, 1000, 10)};
  servers[0].load.work_seconds = 5;  // 40 GF/s but 5 s of work ahead
  PolicyState state;
  // 0: 5 + 1 = 6 s; 1: 2 s; 2: 4 s.
  CHECK(Rank(Policy::kCompletion, servers, ep, 3, &state) == std::vector<uint32_t>{1, 2, 0});
}

TEST_CASE("placement_reservations_spread_decisions_made_between_reports", "[placement]") {
  // Two identical servers with one slot each and no report in between: the
  // first call reserves its work on the first, so the second goes to the
  // other instead of piling up (Ray's spillback problem, ray#20050).
  Candidate servers[] = {Server(0, 1, 0, 1000, 10), Server(1, 1, 0, 1000, 10)};
  const CallShape call{1e10, 0, 0};  // 1 s
  PolicyState state;
  auto first = Rank(Policy::kCompletion, servers, call, 1, &state);
  REQUIRE(first == std::vector<uint32_t>{0});
  Reserve(&servers[0].load, Predict(servers[0], call).compute);
  CHECK(servers[0].load.reserved_calls == 1);
  CHECK(servers[0].load.reserved_seconds == Approx(1.0));
  CHECK(Predict(servers[0], call).queue == Approx(1.0));
  CHECK(Rank(Policy::kCompletion, servers, call, 1, &state) == std::vector<uint32_t>{1});
  CHECK(LoadFigure(servers[0].load) == Approx(1.0));
}

TEST_CASE("placement_ties_keep_candidate_order_and_limits_hold", "[placement]") {
  const Candidate same[] = {Server(4, 1, 0, 100, 1), Server(2, 1, 0, 100, 1),
                            Server(8, 1, 0, 100, 1)};
  PolicyState state;
  const CallShape call{1e9, 1000, 1000};
  CHECK(Rank(Policy::kCompletion, same, call, 10, &state) == std::vector<uint32_t>{4, 2, 8});
  CHECK(Rank(Policy::kLoad, same, call, 2, &state) == std::vector<uint32_t>{4, 2});
  CHECK(Rank(Policy::kCompletion, {}, call, 3, &state).empty());
  CHECK(Rank(Policy::kCompletion, same, call, 0, &state).empty());
}

TEST_CASE("placement_a_link_without_bandwidth_ranks_last", "[placement]") {
  Candidate servers[] = {Server(0, 1, 0, 0, 100), Server(1, 4, 3, 1, 1)};
  PolicyState state;
  const CallShape call{1e9, 1'000'000, 0};
  CHECK(Rank(Policy::kCompletion, servers, call, 2, &state) == std::vector<uint32_t>{1, 0});
  // With nothing to move, bandwidth does not matter.
  CHECK(Rank(Policy::kCompletion, servers, CallShape{1e9, 0, 0}, 1, &state) ==
        std::vector<uint32_t>{0});
}

TEST_CASE("placement_round_robin_cycles", "[placement]") {
  const Candidate servers[] = {Server(10, 1, 0, 1, 1), Server(11, 1, 0, 1, 1),
                               Server(12, 1, 0, 1, 1)};
  PolicyState state;
  CHECK(Rank(Policy::kRoundRobin, servers, {}, 2, &state) == std::vector<uint32_t>{10, 11});
  CHECK(Rank(Policy::kRoundRobin, servers, {}, 2, &state) == std::vector<uint32_t>{11, 12});
  CHECK(Rank(Policy::kRoundRobin, servers, {}, 5, &state) == std::vector<uint32_t>{12, 10, 11});
}

TEST_CASE("placement_random_is_uniform_and_distinct", "[placement]") {
  std::vector<Candidate> servers;
  for (uint32_t i = 0; i < 4; ++i) servers.push_back(Server(100 + i, 1, 0, 1, 1));
  PolicyState state;
  std::map<uint32_t, int> first;
  for (int draw = 0; draw < 10000; ++draw) {
    auto ranked = Rank(Policy::kRandom, servers, {}, 3, &state);
    REQUIRE(ranked.size() == 3);
    REQUIRE(std::set<uint32_t>(ranked.begin(), ranked.end()).size() == 3);
    for (uint32_t s : ranked) REQUIRE((s >= 100 && s < 104));
    ++first[ranked[0]];
  }
  REQUIRE(first.size() == 4);
  for (const auto &[server, count] : first) {
    CHECK(count > 2250);  // 2,500 expected; 5 standard deviations are ~217
    CHECK(count < 2750);
  }
}

TEST_CASE("placement_policy_names", "[placement]") {
  for (Policy p : {Policy::kCompletion, Policy::kLoad, Policy::kRoundRobin, Policy::kRandom})
    CHECK(ParsePolicy(PolicyName(p)) == p);
  CHECK(PolicyName(Policy::kRoundRobin) == "round-robin");
  CHECK_FALSE(ParsePolicy("fastest").has_value());
  CHECK_FALSE(ParsePolicy("").has_value());
}

TEST_CASE("placement_prefer_planned_moves_only_for_a_clear_gain", "[placement]") {
  // Three idle servers of 1, 1.05 and 2 Gflop/s on equal links; a block's
  // plan chose server 0 when it was computed.
  std::vector<Candidate> c = {Server(0, 1, 0, 1000, 1.0), Server(1, 1, 0, 1000, 1.05),
                              Server(2, 1, 0, 1000, 2.0)};
  const CallShape call{1e9, 0, 0};
  PolicyState state;
  std::vector<uint32_t> ranked = Rank(Policy::kCompletion, c, call, 3, &state);
  REQUIRE(ranked.front() == 2);
  // Server 2 finishes in half the time: a clear gain, the plan is overruled.
  CHECK(PreferPlanned(ranked, c, call, 0, 0.2) == ranked);
  // Without server 2, server 1 is only ~5 % faster: the planned one stays.
  std::vector<Candidate> two(c.begin(), c.begin() + 2);
  std::vector<uint32_t> r2 = Rank(Policy::kCompletion, two, call, 2, &state);
  REQUIRE(r2 == std::vector<uint32_t>{1, 0});
  CHECK(PreferPlanned(r2, two, call, 0, 0.2) == std::vector<uint32_t>{0, 1});
  // A planned index the ranking left out (limit 1) comes first all the same.
  CHECK(PreferPlanned({1}, two, call, 0, 0.2) == std::vector<uint32_t>{0, 1});
  CHECK(PreferPlanned(r2, two, call, 7, 0.2) == r2);  // not a candidate
}

TEST_CASE("placement_relayed_server_pays_the_extra_hop", "[placement]") {
  // Two equal servers, one behind a relay whose leg is 100 Mbit/s with a
  // 5 ms round trip: the direct one wins, and the relayed prediction holds
  // the leg's round trip and its slower bandwidth.
  Candidate direct = Server(0, 2, 0, 1000, 10);
  Candidate relayed = Server(1, 2, 0, 1000, 10);
  relayed.relayed = true;
  relayed.relay_leg = {0.005, 100 * kMbit};
  const CallShape call = Dgesv(500);
  const Prediction pd = Predict(direct, call), pr = Predict(relayed, call);
  CHECK(pr.latency == Approx(0.006));
  CHECK(pr.send == Approx(static_cast<double>(call.in_bytes) / (100 * kMbit)));
  CHECK(pd.send == Approx(static_cast<double>(call.in_bytes) / (1000 * kMbit)));
  PolicyState state;
  const Candidate both[] = {relayed, direct};
  CHECK(Rank(Policy::kCompletion, both, call, 2, &state) == std::vector<uint32_t>{0, 1});

  // A link measured through the relay already holds its bandwidth: only the
  // dial-back's round trip is added.
  relayed.relay_leg.bandwidth_bytes_per_second = 0;
  CHECK(Predict(relayed, call).send == Approx(pd.send));
  CHECK(Predict(relayed, call).latency == Approx(0.006));

  // The hop is a cost, not a ban: a busy direct server loses to it.
  direct.load.running = 2;
  direct.load.work_seconds = 60;
  const Candidate busy[] = {relayed, direct};
  CHECK(Rank(Policy::kCompletion, busy, call, 2, &state) == std::vector<uint32_t>{1, 0});
}
