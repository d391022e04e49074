// Unit tests of the admission plan (server/admission_plan.h): every path a
// call can take to its slot, and when it gives the slot back, as a table.
#include "server/admission_plan.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using ninf::server::AdmissionFacts;
using ninf::server::AdmissionOrder;
using ninf::server::AdmissionPlan;
using ninf::server::LaterCallsPlan;
using ninf::server::NoFreeSlot;
using ninf::server::PlanAdmission;
using ninf::server::ReleaseOf;
using ninf::server::SlotPath;
using ninf::server::SlotPathName;
using ninf::server::SlotRelease;

namespace {

constexpr AdmissionOrder kArrival = AdmissionOrder::kArrival;
constexpr AdmissionOrder kStart = AdmissionOrder::kStart;

struct PlanCase {
  const char *name;
  AdmissionFacts facts;
  SlotPath path;
  // The path once a kFreeSlotAtHandoff call finds no slot free (NoFreeSlot).
  SlotPath without_free_slot;
  // ReleaseOf under release_slot = "computed" (under "result": always kResult).
  SlotRelease release_computed;
};

// clang-format off
const std::vector<PlanCase> kPlanCases = {
  // name                                   order     2-phase direct redir  args in
  {"arrival, arguments still coming",       {kArrival, false, true,  false, false},
   SlotPath::kArrivalFirst, SlotPath::kArrivalFirst, SlotRelease::kComputed},
  {"arrival, whole ARGS frame in",          {kArrival, false, true,  false, true},
   SlotPath::kFreeSlotAtHandoff, SlotPath::kArrivalFirst, SlotRelease::kResult},
  {"start order",                           {kStart,   false, true,  false, false},
   SlotPath::kSlotFirst, SlotPath::kSlotFirst, SlotRelease::kResult},
  {"start order, whole ARGS frame in",      {kStart,   false, true,  false, true},
   SlotPath::kSlotFirst, SlotPath::kSlotFirst, SlotRelease::kResult},
  {"two-phase call",                        {kArrival, true,  true,  false, false},
   SlotPath::kSlotFirst, SlotPath::kSlotFirst, SlotRelease::kResult},
  {"two-phase call, whole ARGS frame in",   {kArrival, true,  true,  false, true},
   SlotPath::kSlotFirst, SlotPath::kSlotFirst, SlotRelease::kResult},
  {"launch holding cores (MPI, Slurm)",     {kArrival, false, false, false, false},
   SlotPath::kSlotFirst, SlotPath::kSlotFirst, SlotRelease::kResult},
  {"launch holding cores, ARGS in",         {kArrival, false, false, false, true},
   SlotPath::kSlotFirst, SlotPath::kSlotFirst, SlotRelease::kResult},
  {"redirected executable",                 {kArrival, false, false, true,  false},
   SlotPath::kSlotFirst, SlotPath::kSlotFirst, SlotRelease::kResult},
  {"redirected, direct launch",             {kArrival, false, true,  true,  true},
   SlotPath::kSlotFirst, SlotPath::kSlotFirst, SlotRelease::kResult},
  {"start order, two-phase, redirected",    {kStart,   true,  false, true,  true},
   SlotPath::kSlotFirst, SlotPath::kSlotFirst, SlotRelease::kResult},
};
// clang-format on

}  // namespace

TEST_CASE("admission_plan_table", "[admission_plan]") {
  for (const PlanCase &c : kPlanCases) {
    INFO(c.name);
    const AdmissionPlan plan = PlanAdmission(c.facts);
    CHECK(SlotPathName(plan.path) == std::string(SlotPathName(c.path)));
    const AdmissionPlan fallback = NoFreeSlot(plan);
    CHECK(SlotPathName(fallback.path) == std::string(SlotPathName(c.without_free_slot)));
    // A call that found no slot free at its hand-off reads its arguments
    // first, and then gives its slot back when its routine returns.
    CHECK(ReleaseOf(fallback, "computed") ==
          (c.path == SlotPath::kSlotFirst ? SlotRelease::kResult : SlotRelease::kComputed));
    CHECK(ReleaseOf(plan, "computed") == c.release_computed);
    CHECK(ReleaseOf(plan, "result") == SlotRelease::kResult);
    CHECK(ReleaseOf(fallback, "result") == SlotRelease::kResult);
    CHECK(plan.ArgumentsFirst() == (c.path == SlotPath::kArrivalFirst));
  }
}

TEST_CASE("admission_plan_every_combination_of_facts", "[admission_plan]") {
  // Beyond the table: all 32 combinations. Only a direct, local, one-shot
  // or handle call under admission = "arrival" reads its arguments before
  // its slot; with them all in, it first tries a free slot.
  for (int bits = 0; bits < 32; ++bits) {
    const AdmissionFacts f{.order = (bits & 1) ? kStart : kArrival,
                           .two_phase = (bits & 2) != 0,
                           .direct_launch = (bits & 4) != 0,
                           .redirected = (bits & 8) != 0,
                           .arguments_in = (bits & 16) != 0};
    INFO("facts bits " << bits);
    const bool arrives_first =
        f.order == kArrival && !f.two_phase && f.direct_launch && !f.redirected;
    const SlotPath expected = !arrives_first   ? SlotPath::kSlotFirst
                              : f.arguments_in ? SlotPath::kFreeSlotAtHandoff
                                               : SlotPath::kArrivalFirst;
    const AdmissionPlan plan = PlanAdmission(f);
    CHECK(plan.path == expected);
    // Whatever happens at the hand-off, a call ends up either with its slot
    // first or reading its arguments first.
    CHECK(NoFreeSlot(plan).path != SlotPath::kFreeSlotAtHandoff);
    // A handle's later calls read their arguments first whenever its first
    // call could have (whether or not that one found a slot free at its
    // hand-off): a slow later upload holds no slot.
    CHECK(LaterCallsPlan(plan).ArgumentsFirst() == arrives_first);
  }
}

TEST_CASE("admission_plan_release_follows_the_live_setting", "[admission_plan]") {
  const AdmissionPlan arrival{.path = SlotPath::kArrivalFirst};
  CHECK(ReleaseOf(arrival, "computed") == SlotRelease::kComputed);
  CHECK(ReleaseOf(arrival, "result") == SlotRelease::kResult);
  // A slot taken before the arguments (at the CALL or at the hand-off) is
  // kept until the result is out, whatever release_slot says.
  CHECK(ReleaseOf({.path = SlotPath::kSlotFirst}, "computed") == SlotRelease::kResult);
  CHECK(ReleaseOf({.path = SlotPath::kFreeSlotAtHandoff}, "computed") == SlotRelease::kResult);
}

TEST_CASE("admission_plan_path_names", "[admission_plan]") {
  CHECK(std::string(SlotPathName(SlotPath::kSlotFirst)) == "slot_first");
  CHECK(std::string(SlotPathName(SlotPath::kFreeSlotAtHandoff)) == "free_slot_at_handoff");
  CHECK(std::string(SlotPathName(SlotPath::kArrivalFirst)) == "arrival_first");
}
