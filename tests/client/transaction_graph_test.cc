// The dependency graph of a transaction block (client/transaction_graph.h):
// hazards from overlapping extents, where each byte read comes from, and
// the final values.
#include "client/transaction_graph.h"

#include <catch2/catch.hpp>

using namespace ninf::client;

namespace {

ArrayUse In(uintptr_t b, uintptr_t e) { return {b, e, true, false}; }
ArrayUse Out(uintptr_t b, uintptr_t e) { return {b, e, false, true}; }
ArrayUse InOut(uintptr_t b, uintptr_t e) { return {b, e, true, true}; }

bool Has(const BlockGraph &g, int from, int to, Hazard h) {
  for (const Dependency &d : g.dependencies)
    if (d.from == from && d.to == to) return d.hazard == h;
  return false;
}

uint64_t FlowBytes(const BlockGraph &g, int from, int to) {
  uint64_t n = 0;
  for (const Flow &f : g.flows)
    if (f.from == from && f.to == to) n += f.bytes();
  return n;
}

}  // namespace

TEST_CASE("graph_independent_calls_have_no_edges", "[graph]") {
  // Two products reading the same inputs into different outputs.
  BlockGraph g = BuildBlockGraph(
      {{In(0, 100), In(100, 200), Out(200, 300)}, {In(0, 100), In(100, 200), Out(300, 400)}});
  CHECK(g.dependencies.empty());
  CHECK(FlowBytes(g, kClient, 0) == 200);
  CHECK(FlowBytes(g, kClient, 1) == 200);
  CHECK(FlowBytes(g, 0, kClient) == 100);
  CHECK(FlowBytes(g, 1, kClient) == 100);
}

TEST_CASE("graph_read_after_write_chain", "[graph]") {
  // C = A*B; E = C*D; G = E*F
  BlockGraph g = BuildBlockGraph({{In(0, 10), In(10, 20), Out(20, 30)},
                                  {In(20, 30), In(30, 40), Out(40, 50)},
                                  {In(40, 50), In(50, 60), Out(60, 70)}});
  CHECK(Has(g, 0, 1, Hazard::kReadAfterWrite));
  CHECK(Has(g, 1, 2, Hazard::kReadAfterWrite));
  CHECK(g.dependencies.size() == 2);
  CHECK(FlowBytes(g, 0, 1) == 10);
  CHECK(FlowBytes(g, 1, 2) == 10);
  CHECK(FlowBytes(g, kClient, 1) == 10);  // D only
  CHECK(g.Predecessors(2) == std::vector<int>{1});
}

TEST_CASE("graph_write_after_read_and_write_after_write", "[graph]") {
  BlockGraph g = BuildBlockGraph({{In(0, 10), Out(10, 20)},     // reads x, writes y
                                  {In(50, 60), Out(0, 10)},     // overwrites x
                                  {In(60, 70), Out(10, 20)}});  // overwrites y
  CHECK(Has(g, 0, 1, Hazard::kWriteAfterRead));
  CHECK(Has(g, 0, 2, Hazard::kWriteAfterWrite));
  CHECK_FALSE(Has(g, 1, 2, Hazard::kWriteAfterWrite));
  // The final y is call 2's, not call 0's.
  CHECK(FlowBytes(g, 0, kClient) == 0);
  CHECK(FlowBytes(g, 2, kClient) == 10);
  CHECK(FlowBytes(g, 1, kClient) == 10);
}

TEST_CASE("graph_partial_overlap_is_a_dependency", "[graph]") {
  // The second call reads a window that straddles the first call's output.
  BlockGraph g = BuildBlockGraph({{Out(100, 200)}, {In(150, 250), Out(300, 310)}});
  CHECK(Has(g, 0, 1, Hazard::kReadAfterWrite));
  CHECK(FlowBytes(g, 0, 1) == 50);
  CHECK(FlowBytes(g, kClient, 1) == 50);
  // Touching without overlapping is no dependency.
  BlockGraph t = BuildBlockGraph({{Out(100, 200)}, {In(200, 300), Out(300, 310)}});
  CHECK(t.dependencies.empty());
}

TEST_CASE("graph_inout_chain_reads_the_latest_writer", "[graph]") {
  // echo(a) three times: each INOUT reads what the one before wrote.
  BlockGraph g = BuildBlockGraph({{InOut(0, 80)}, {InOut(0, 80)}, {InOut(0, 80)}});
  CHECK(Has(g, 0, 1, Hazard::kReadAfterWrite));
  CHECK(Has(g, 1, 2, Hazard::kReadAfterWrite));
  CHECK(Has(g, 0, 2, Hazard::kReadAfterWrite));
  CHECK(FlowBytes(g, kClient, 0) == 80);
  CHECK(FlowBytes(g, 0, 1) == 80);
  CHECK(FlowBytes(g, 0, 2) == 0);  // call 1 overwrote all of it
  CHECK(FlowBytes(g, 1, 2) == 80);
  CHECK(FlowBytes(g, 2, kClient) == 80);
}

TEST_CASE("graph_aliasing_within_one_call", "[graph]") {
  // dmmul(n, A, A, A): one call reads and writes the same bytes; a later
  // reader depends on it, and the earlier writer's bytes reach the call.
  BlockGraph g = BuildBlockGraph({{Out(0, 40)}, {In(0, 40), In(0, 40), Out(0, 40)}, {In(0, 40)}});
  CHECK(Has(g, 0, 1, Hazard::kReadAfterWrite));
  CHECK(Has(g, 1, 2, Hazard::kReadAfterWrite));
  CHECK(FlowBytes(g, 0, 1) == 80);  // both reads
  CHECK(FlowBytes(g, 1, 2) == 40);
  CHECK(FlowBytes(g, 1, kClient) == 40);
}

TEST_CASE("graph_empty_arrays_touch_nothing", "[graph]") {
  BlockGraph g = BuildBlockGraph({{Out(10, 10)}, {In(10, 10)}});
  CHECK(g.dependencies.empty());
  CHECK(g.flows.empty());
}

TEST_CASE("graph_merge_ranges", "[graph]") {
  auto m = MergeRanges({In(50, 60), Out(0, 10), In(5, 20), Out(20, 30), In(40, 40)});
  REQUIRE(m.size() == 2);
  CHECK((m[0].begin == 0 && m[0].end == 30 && m[0].reads && m[0].writes));
  CHECK((m[1].begin == 50 && m[1].end == 60 && !m[1].writes));
}
