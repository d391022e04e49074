// Call plans (stubs/runtime/call_plan.h) without sockets: where each
// parameter's bytes come from and where its result goes in every call mode,
// the payload the ARGS frame must carry, and the rules that refuse
// combinations of modes, with the exact codes and messages the executable
// sends (clients and tests match on them).
#include "stubs/runtime/call_plan.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "protocol/shared_memory.h"
#include "tests/runtime/sample_interface.h"

namespace wire = ninf::wire;
using ninf::CallLayout;
using ninf::Status;
using ninf::stub::CallPlan;
using ninf::stub::CallRequest;
using ninf::stub::Destination;
using ninf::stub::PlanCall;
using ninf::stub::Source;

namespace {

// f(IN long n, IN double x[n], INOUT double z[n], OUT double y[n], WORK double w[n])
constexpr uint32_t kN = 0, kX = 1, kZ = 2, kY = 3, kW = 4;

wire::FunctionInterface Iface() { return ninf::test::SampleInterface(); }

// One call of f with n = `n`: its Args and layout, planned on request.
struct Call {
  explicit Call(int64_t n = 4) : iface(Iface()) {
    const std::vector<int64_t> values = {n, 0, 0, 0, 0};
    REQUIRE(ninf::ComputeLayout(iface, values, 0, &layout).ok());
    args.add_scalars()->set_i(n);
  }
  uint64_t bytes() const { return layout.params[kX].bytes; }
  void Ref(uint32_t param, uint64_t ref_bytes) {
    wire::DataRef *r = args.add_refs();
    r->set_param(param);
    r->set_address("127.0.0.1:3000");
    r->set_id(7);
    r->set_bytes(ref_bytes);
  }
  void Ref(uint32_t param) { Ref(param, bytes()); }
  Status Plan(CallRequest request) { return PlanCall(iface, layout, args, request, &plan); }
  // A request whose payload is what the interface asks for without
  // references or shared memory.
  CallRequest Plain() const { return {.payload_bytes = layout.send_bytes}; }

  wire::FunctionInterface iface;
  CallLayout layout;
  wire::Args args;
  CallPlan plan;
};

std::vector<Source> Sources(const CallPlan &plan) {
  std::vector<Source> out;
  for (const auto &p : plan.params) out.push_back(p.source);
  return out;
}

std::vector<Destination> Destinations(const CallPlan &plan) {
  std::vector<Destination> out;
  for (const auto &p : plan.params) out.push_back(p.destination);
  return out;
}

const std::string kSharedRefused = "kept data and shared memory cannot be combined";
const std::string kRedirectRefused =
    "'f' runs on another host than ninfd (launch_address): it cannot keep arrays on the server "
    "or serve a two-phase call";

}  // namespace

TEST_CASE("call_plan_plain_socket_call", "[call_plan]") {
  Call c;
  REQUIRE(c.Plan(c.Plain()).ok());
  CHECK(Sources(c.plan) == std::vector<Source>{Source::kScalar, Source::kSocket, Source::kSocket,
                                               Source::kBlank, Source::kBlank});
  CHECK(Destinations(c.plan) == std::vector<Destination>{Destination::kNone, Destination::kNone,
                                                         Destination::kSocket, Destination::kSocket,
                                                         Destination::kNone});
  CHECK(c.plan.expected_payload == 2 * c.bytes());  // x and z
  CHECK_FALSE(c.plan.shared);
  CHECK_FALSE(c.plan.two_phase);
  CHECK_FALSE(c.plan.team);
  CHECK(c.plan.params[kN].bytes == 0);
  for (uint32_t i : {kX, kZ, kY, kW}) CHECK(c.plan.params[i].bytes == 32);
  for (const auto &p : c.plan.params) CHECK(p.ref == nullptr);
}

TEST_CASE("call_plan_payload_must_match_the_arrays_sent", "[call_plan]") {
  Call c;
  Status st = c.Plan({.payload_bytes = 63});
  CHECK(st.code() == NINF_ERR_ARGUMENT_MISMATCH);
  CHECK(st.message() == "client sent 63 bytes of arrays, the interface needs 64");
  st = c.Plan({.payload_bytes = 65});
  CHECK(st.code() == NINF_ERR_ARGUMENT_MISMATCH);
}

TEST_CASE("call_plan_shared_memory_arrays_in_place", "[call_plan]") {
  Call c;
  c.args.set_shared_memory(true);
  REQUIRE(c.Plan({.payload_bytes = 0}).ok());
  // WORK arrays have no place in the segment: a buffer of the executable.
  CHECK(Sources(c.plan) == std::vector<Source>{Source::kScalar, Source::kSegment, Source::kSegment,
                                               Source::kSegment, Source::kBlank});
  CHECK(Destinations(c.plan) ==
        std::vector<Destination>{Destination::kNone, Destination::kNone, Destination::kSegment,
                                 Destination::kSegment, Destination::kNone});
  CHECK(c.plan.shared);
  CHECK(c.plan.expected_payload == 0);
  const ninf::SharedPlacement placement = ninf::PlaceShared(c.iface, c.layout);
  CHECK(c.plan.segment_bytes == placement.bytes);
  for (uint32_t i : {kX, kZ, kY}) CHECK(c.plan.params[i].segment_offset == placement.offsets[i]);
  CHECK(c.plan.params[kY].segment_offset > c.plan.params[kX].segment_offset);

  // The arrays are in the segment: a payload is a mismatch.
  Status st = c.Plan(c.Plain());
  CHECK(st.code() == NINF_ERR_ARGUMENT_MISMATCH);
  CHECK(st.message() == "client sent 64 bytes of arrays, the interface needs 0");
}

TEST_CASE("call_plan_references_come_from_a_store", "[call_plan]") {
  Call c;
  c.Ref(kZ);
  REQUIRE(c.Plan({.payload_bytes = c.bytes()}).ok());  // x only
  CHECK(Sources(c.plan) == std::vector<Source>{Source::kScalar, Source::kSocket, Source::kStoreRef,
                                               Source::kBlank, Source::kBlank});
  // An INOUT array read from a store still goes back to the client.
  CHECK(c.plan.params[kZ].destination == Destination::kSocket);
  CHECK(c.plan.params[kZ].ref == &c.args.refs(0));
  CHECK(c.plan.params[kX].ref == nullptr);
  CHECK(c.plan.expected_payload == c.bytes());

  c.Ref(kX);
  REQUIRE(c.Plan({.payload_bytes = 0}).ok());
  CHECK(c.plan.params[kX].source == Source::kStoreRef);
  CHECK(c.plan.params[kX].ref == &c.args.refs(1));
  CHECK(c.Plan({.payload_bytes = c.bytes()}).code() == NINF_ERR_ARGUMENT_MISMATCH);
}

TEST_CASE("call_plan_bad_references_are_refused", "[call_plan]") {
  struct Case {
    uint32_t param;
    int64_t bytes_delta;
    const char *what;
  };
  const Case cases[] = {{9, 0, "no such parameter"},
                        {kN, 0, "a scalar"},
                        {kY, 0, "an OUT array"},
                        {kW, 0, "a WORK array"},
                        {kX, 8, "another size"}};
  for (const Case &k : cases) {
    SECTION(k.what) {
      Call c;
      c.Ref(k.param, c.bytes() + static_cast<uint64_t>(k.bytes_delta));
      Status st = c.Plan(c.Plain());
      CHECK(st.code() == NINF_ERR_ARGUMENT_MISMATCH);
      CHECK(st.message() == "a data reference for parameter " + std::to_string(k.param) +
                                " does not match an IN or INOUT array of its size");
    }
  }
  SECTION("the same parameter twice") {
    Call c;
    c.Ref(kX);
    c.Ref(kX);
    CHECK(c.Plan({.payload_bytes = 0}).message() ==
          "a data reference for parameter 1 does not match an IN or INOUT array of its size");
  }
}

TEST_CASE("call_plan_kept_arrays_stay_on_the_server", "[call_plan]") {
  Call c;
  c.args.add_keep(kY);
  c.args.add_keep(kZ);
  REQUIRE(c.Plan(c.Plain()).ok());
  CHECK(Destinations(c.plan) == std::vector<Destination>{Destination::kNone, Destination::kNone,
                                                         Destination::kKeep, Destination::kKeep,
                                                         Destination::kNone});
  // Keeping changes where a result goes, not where the argument comes from.
  CHECK(c.plan.params[kZ].source == Source::kSocket);
  CHECK(c.plan.expected_payload == 2 * c.bytes());

  for (uint32_t k : {kN, kX, kW, 9u}) {
    Call bad;
    bad.args.add_keep(k);
    Status st = bad.Plan(bad.Plain());
    CHECK(st.code() == NINF_ERR_ARGUMENT_MISMATCH);
    CHECK(st.message() ==
          "only OUT and INOUT arrays can be kept (parameter " + std::to_string(k) + ")");
  }
}

TEST_CASE("call_plan_two_phase_results_go_to_the_collector", "[call_plan]") {
  Call c;
  CallRequest request = c.Plain();
  request.two_phase = true;
  REQUIRE(c.Plan(request).ok());
  CHECK(c.plan.two_phase);
  CHECK(Destinations(c.plan) ==
        std::vector<Destination>{Destination::kNone, Destination::kNone, Destination::kCollector,
                                 Destination::kCollector, Destination::kNone});
  CHECK(Sources(c.plan) == std::vector<Source>{Source::kScalar, Source::kSocket, Source::kSocket,
                                               Source::kBlank, Source::kBlank});

  // A kept array stays kept; the rest goes into the collector's result.
  c.args.add_keep(kY);
  REQUIRE(c.Plan(request).ok());
  CHECK(c.plan.params[kY].destination == Destination::kKeep);
  CHECK(c.plan.params[kZ].destination == Destination::kCollector);
}

TEST_CASE("call_plan_team_changes_no_parameter", "[call_plan]") {
  Call alone, team;
  CallRequest request = team.Plain();
  request.team = true;
  REQUIRE(alone.Plan(alone.Plain()).ok());
  REQUIRE(team.Plan(request).ok());
  CHECK(team.plan.team);
  CHECK(Sources(team.plan) == Sources(alone.plan));
  CHECK(Destinations(team.plan) == Destinations(alone.plan));
}

// Every combination of the modes, and what comes of it: the rules of
// call_plan.h as a table.
TEST_CASE("call_plan_mode_combinations", "[call_plan]") {
  struct Row {
    bool shared, ref, keep, two_phase, redirected;
    int code;
  };
  constexpr int kOk = NINF_OK, kProto = NINF_ERR_PROTOCOL, kNotSup = NINF_ERR_NOT_SUPPORTED;
  const Row rows[] = {
      // {shared, ref, keep, two-phase, redirected, outcome}, two rows a line
      {false, false, false, false, false, kOk},  {false, false, false, false, true, kOk},
      {false, false, false, true, false, kOk},   {false, false, false, true, true, kNotSup},
      {false, false, true, false, false, kOk},   {false, false, true, false, true, kNotSup},
      {false, false, true, true, false, kOk},    {false, false, true, true, true, kNotSup},
      {false, true, false, false, false, kOk},   {false, true, false, false, true, kOk},
      {false, true, false, true, false, kOk},    {false, true, false, true, true, kNotSup},
      {false, true, true, false, false, kOk},    {false, true, true, false, true, kNotSup},
      {false, true, true, true, false, kOk},     {false, true, true, true, true, kNotSup},
      {true, false, false, false, false, kOk},   {true, false, false, false, true, kOk},
      {true, false, false, true, false, kProto}, {true, false, false, true, true, kProto},
      {true, false, true, false, false, kProto}, {true, false, true, false, true, kProto},
      {true, false, true, true, false, kProto},  {true, false, true, true, true, kProto},
      {true, true, false, false, false, kProto}, {true, true, false, false, true, kProto},
      {true, true, false, true, false, kProto},  {true, true, false, true, true, kProto},
      {true, true, true, false, false, kProto},  {true, true, true, false, true, kProto},
      {true, true, true, true, false, kProto},   {true, true, true, true, true, kProto},
  };
  for (const Row &r : rows) {
    Call c;
    c.args.set_shared_memory(r.shared);
    if (r.ref) c.Ref(kX);
    if (r.keep) c.args.add_keep(kY);
    CallRequest request;
    request.payload_bytes = r.shared ? 0 : (r.ref ? c.bytes() : 2 * c.bytes());
    request.two_phase = r.two_phase;
    request.redirected = r.redirected;
    INFO("shared " << r.shared << " ref " << r.ref << " keep " << r.keep << " two-phase "
                   << r.two_phase << " redirected " << r.redirected);
    const Status st = c.Plan(request);
    CHECK(st.code() == r.code);
    if (r.code == kProto) CHECK(st.message() == kSharedRefused);
    if (r.code == kNotSup) CHECK(st.message() == kRedirectRefused);
  }
}

TEST_CASE("call_plan_refusals_come_in_order", "[call_plan]") {
  SECTION("a bad keep before a refused combination") {
    Call c;
    c.args.set_shared_memory(true);
    c.args.add_keep(kX);
    CHECK(c.Plan({.payload_bytes = 0}).code() == NINF_ERR_ARGUMENT_MISMATCH);
  }
  SECTION("shared memory before the redirect") {
    Call c;
    c.args.set_shared_memory(true);
    CHECK(c.Plan({.payload_bytes = 0, .two_phase = true, .redirected = true}).message() ==
          kSharedRefused);
  }
  SECTION("a refused combination before the payload size") {
    Call c;
    c.args.add_keep(kY);
    CHECK(c.Plan({.payload_bytes = 1, .redirected = true}).code() == NINF_ERR_NOT_SUPPORTED);
  }
}

// A reference to an empty array carries no bytes: the shared-memory rule
// lets it pass (as it always has), and the array is fetched like any other.
TEST_CASE("call_plan_empty_reference_with_shared_memory", "[call_plan]") {
  Call c(0);
  c.args.set_shared_memory(true);
  c.Ref(kX, 0);
  REQUIRE(c.Plan({.payload_bytes = 0}).ok());
  CHECK(c.plan.params[kX].source == Source::kStoreRef);
  CHECK(c.plan.params[kZ].source == Source::kSegment);
}

// --- The executable's slot step (PlanSlot): its part of ninfd's admission plan ---

TEST_CASE("call_plan_slot_step_table", "[call_plan]") {
  using ninf::stub::PlanSlot;
  using ninf::stub::SlotFacts;
  using ninf::stub::SlotPlan;
  using ninf::stub::SlotStep;
  struct Row {
    const char *name;
    SlotFacts facts;
    SlotStep step;
    bool report_arriving;
    bool ask_room;
    bool no_wait;
  };
  // clang-format off
  const std::vector<Row> rows = {
    // name                                          args first later  leased frame in
    {"first call, slot with the hand-off",           {false,     false, false, false}, SlotStep::kHeld,               false, false, false},
    {"first call, admitted after arrival",           {true,      false, false, false}, SlotStep::kAskAfterArguments, false, false, false},
    {"handle's next call, slot first",               {false,     true,  false, false}, SlotStep::kAskBeforeArguments, false, false, false},
    {"handle's next call, after arrival, coming",    {true,      true,  false, false}, SlotStep::kAskAfterArguments, true,  true,  false},
    {"handle's next call, after arrival, all in",    {true,      true,  false, true},  SlotStep::kAskAfterArguments, true,  false, false},
    {"handle's next call on its kept slot",          {false,     true,  true,  false}, SlotStep::kHeld,               false, false, true},
    {"kept slot, admitted after arrival",            {true,      true,  true,  false}, SlotStep::kHeld,               false, false, true},
    {"first call's frame all in: the hand-off's room",{true,     false, false, true},  SlotStep::kAskAfterArguments, false, false, false},
  };
  // clang-format on
  for (const Row &r : rows) {
    INFO(r.name);
    const SlotPlan plan = PlanSlot(r.facts);
    CHECK(plan.step == r.step);
    CHECK(plan.report_arriving == r.report_arriving);
    CHECK(plan.ask_room == r.ask_room);
    CHECK(plan.no_wait == r.no_wait);
  }
}
