// The block planner (client/transaction_plan.h) on its own: the published
// worked example of HEFT, slots, the client's links, and a case where a
// link's bandwidth changes the plan.
#include "client/transaction_plan.h"

#include <catch2/catch.hpp>

using namespace ninf::client;

namespace {

// Every link between distinct nodes alike.
std::vector<std::vector<PlanLink>> UniformLinks(int servers, PlanLink link) {
  return std::vector<std::vector<PlanLink>>(servers + 1, std::vector<PlanLink>(servers + 1, link));
}

// Topcuoglu, Hariri and Wu (2002), Fig. 2: ten tasks, three processors;
// edge weights are the communication costs (unit bandwidth, no latency).
PlanProblem PaperExample() {
  PlanProblem p;
  p.servers.assign(3, PlanServer{});
  p.links = UniformLinks(3, PlanLink{0, 1});
  const double w[10][3] = {{14, 16, 9}, {13, 19, 18}, {11, 13, 19}, {13, 8, 17},  {12, 13, 10},
                           {13, 16, 9}, {7, 15, 11},  {5, 11, 14},  {18, 12, 20}, {21, 7, 16}};
  for (const auto &row : w) p.tasks.push_back({{row[0], row[1], row[2]}, 0, 0});
  p.edges = {{0, 1, 18}, {0, 2, 12}, {0, 3, 9},  {0, 4, 11}, {0, 5, 14},
             {1, 7, 19}, {1, 8, 16}, {2, 6, 23}, {3, 7, 27}, {3, 8, 23},
             {4, 8, 13}, {5, 7, 15}, {6, 9, 17}, {7, 9, 11}, {8, 9, 13}};
  return p;
}

}  // namespace

TEST_CASE("plan_heft_paper_example", "[plan]") {
  Plan plan = PlanHeft(PaperExample());
  REQUIRE(plan.ok);
  // The paper's upward ranks and order n1 n3 n4 n2 n5 n6 n9 n7 n8 n10.
  CHECK(plan.rank[0] == Approx(108.0));
  CHECK(plan.rank[1] == Approx(77.0));
  CHECK(plan.rank[2] == Approx(80.0));
  CHECK(plan.rank[3] == Approx(80.0));
  CHECK(plan.rank[5] == Approx(63.333).epsilon(1e-4));
  CHECK(plan.rank[9] == Approx(14.667).epsilon(1e-4));
  CHECK(plan.order == std::vector<int>{0, 2, 3, 1, 4, 5, 8, 6, 7, 9});
  CHECK(plan.makespan == Approx(80.0));
  // n1 on P3 (0 to 9), and n10 last on P2 (73 to 80), as in the paper.
  CHECK(plan.server[0] == 2);
  CHECK(plan.finish[0] == Approx(9.0));
  CHECK(plan.server[9] == 1);
  CHECK(plan.start[9] == Approx(73.0));
}

TEST_CASE("plan_respects_dependencies_and_slots", "[plan]") {
  PlanProblem p = PaperExample();
  Plan plan = PlanHeft(p);
  for (const PlanEdge &e : p.edges)
    CHECK(plan.start[e.to] >=
          plan.finish[e.from] + p.Transfer(e, plan.server[e.from], plan.server[e.to]) - 1e-9);
  // No two tasks overlap on one single-slot server.
  for (int a = 0; a < 10; ++a)
    for (int b = a + 1; b < 10; ++b)
      if (plan.server[a] == plan.server[b])
        CHECK((plan.finish[a] <= plan.start[b] + 1e-9 || plan.finish[b] <= plan.start[a] + 1e-9));
}

TEST_CASE("plan_independent_calls_spread_over_servers_and_slots", "[plan]") {
  PlanProblem p;
  p.servers = {{2, 0}, {1, 0}};
  p.links = UniformLinks(2, PlanLink{0, 1e9});
  for (int i = 0; i < 6; ++i) p.tasks.push_back({{1.0, 1.0}, 0, 0});
  Plan plan = PlanHeft(p);
  REQUIRE(plan.ok);
  // Three slots, six equal calls: two rounds.
  CHECK(plan.makespan == Approx(2.0));
  int on_first = 0;
  for (int s : plan.server) on_first += s == 0;
  CHECK(on_first == 4);
}

TEST_CASE("plan_queue_wait_delays_a_server", "[plan]") {
  PlanProblem p;
  p.servers = {{1, 10.0}, {1, 0}};
  p.links = UniformLinks(2, PlanLink{0, 1e9});
  p.tasks.push_back({{1.0, 3.0}, 0, 0});
  Plan plan = PlanHeft(p);
  CHECK(plan.server[0] == 1);  // 3 s now beats 1 s after a 10 s queue
  CHECK(plan.finish[0] == Approx(3.0));
}

TEST_CASE("plan_bandwidth_changes_the_plan", "[plan]") {
  // Two equal servers; a call reading 100 MB from the client. With equal
  // links the faster routine wins; when the client's link to it is slow,
  // the other server does.
  PlanProblem p;
  p.servers = {{1, 0}, {1, 0}};
  p.links = UniformLinks(2, PlanLink{0.001, 1e9});
  p.tasks.push_back({{1.0, 1.5}, 100'000'000, 8});
  CHECK(PlanHeft(p).server[0] == 0);
  p.links[0][1] = PlanLink{0.001, 12.5e6};  // 100 Mbit/s to server 0: 8 s of input
  Plan plan = PlanHeft(p);
  CHECK(plan.server[0] == 1);
  CHECK(plan.finish[0] == Approx(0.001 + 0.1 + 1.5 + 0.001 + 8e-9));
}

TEST_CASE("plan_keeps_a_chain_on_one_server_when_moving_data_costs_more", "[plan]") {
  // a -> b with a large intermediate: b runs where a ran, although the
  // other server's routine is a little faster.
  PlanProblem p;
  p.servers = {{1, 0}, {1, 0}};
  p.links = UniformLinks(2, PlanLink{0.001, 10e6});
  p.tasks.push_back({{1.0, 1.2}, 0, 0});
  p.tasks.push_back({{1.0, 0.9}, 0, 0});
  p.edges = {{0, 1, 50'000'000}};  // 5 s between servers
  Plan plan = PlanHeft(p);
  CHECK(plan.server[0] == plan.server[1]);
  CHECK(plan.makespan == Approx(2.0));
}

TEST_CASE("plan_fails_for_a_call_no_server_runs", "[plan]") {
  PlanProblem p;
  p.servers = {{1, 0}};
  p.links = UniformLinks(1, PlanLink{});
  p.tasks.push_back({{kCannotRun}, 0, 0});
  CHECK_FALSE(PlanHeft(p).ok);
}

TEST_CASE("plan_recheck_moves_only_for_a_clear_gain", "[plan]") {
  CHECK(RecheckServer({10.0, 9.5, 12.0}, 0, 0.1) == 0);  // 5 % better: stay
  CHECK(RecheckServer({10.0, 8.0, 12.0}, 0, 0.1) == 1);  // 20 % better: move
  CHECK(RecheckServer({kCannotRun, 8.0}, 0, 0.1) == 1);  // the planned server is gone
  CHECK(RecheckServer({3.0, 2.0}, -1, 0.1) == 1);
}
