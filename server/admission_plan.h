// How one call reaches its job slot, and when it gives the slot back: an
// admission plan, computed once per call from the call's facts and the
// settings by a pure function (as stubs/runtime/call_plan.h plans a call's
// arrays), which the scheduler then follows (scheduler.cc OfferJob,
// scheduler_events.cc OnReplying, ExecutableSupply::WarmAfter) instead of
// asking the flags again. Unit-tested case by case in
// tests/server/admission_plan_test.cc.
//
// The paths to a slot:
//
//   kSlotFirst          admission = "start", a two-phase call, a launch that
//                       holds cores itself or a redirected client
//                       (admission.h ArrivesFirst): the call asks for a slot
//                       at its CALL (run, queue or refuse) and its executable
//                       gets it with the hand-off.
//   kFreeSlotAtHandoff  admitted after arrival, with its whole ARGS frame in
//                       the socket behind the CALL: nothing is left to
//                       arrive, so a slot free now is taken at the hand-off
//                       (Admission::TryRun), which saves its executable the
//                       round trip CTL_WANT_SLOT / CTL_SLOT. With no slot
//                       free it goes as kArrivalFirst (NoFreeSlot).
//   kArrivalFirst       the executable reads the arguments first (HANDOFF
//                       flag kHandoffArgsFirst), then asks (CTL_WANT_SLOT);
//                       before the hand-off the call waits for room under
//                       the arrival bounds (ArrivalGate).
//
// A function handle's later calls follow its first call's path (the
// executable is told with the hand-off); one that keeps its slot between
// calls (protocol/slot_lease.h) asks for nothing.
//
// Pure: no I/O, no state, no clock.
#pragma once

#include <string_view>

#include "server/admission.h"

namespace ninf::server {

enum class SlotPath {
  kSlotFirst,
  kFreeSlotAtHandoff,
  kArrivalFirst,
};
const char *SlotPathName(SlotPath path);

// When a call that holds a slot gives it back.
enum class SlotRelease {
  kResult,    // when the call is done (its result is out)
  kComputed,  // when its routine returns: its result's transfer overlaps the
              // next call's computation (release_slot = "computed")
};

// What the plan is made of: the call's facts (and the one setting read at
// the CALL, `order`).
struct AdmissionFacts {
  AdmissionOrder order = AdmissionOrder::kArrival;  // the `admission` setting
  bool two_phase = false;
  bool direct_launch = true;  // a local executable, started by ninfd itself
  bool redirected = false;    // the executable runs on another host (launch over TCP)
  // The call's whole ARGS frame waits in the socket behind the CALL.
  bool arguments_in = false;
};

struct AdmissionPlan {
  SlotPath path = SlotPath::kSlotFirst;
  // Whether the executable reads the arguments before the call asks for its
  // slot (HANDOFF flag kHandoffArgsFirst), for every call of a handle.
  bool ArgumentsFirst() const { return path == SlotPath::kArrivalFirst; }
};

AdmissionPlan PlanAdmission(const AdmissionFacts &facts);

// The plan of a call planned kFreeSlotAtHandoff that found no slot free:
// kArrivalFirst. Any other plan is returned as it is.
AdmissionPlan NoFreeSlot(AdmissionPlan plan);

// The plan of a handle's later calls, whose first call followed `first`:
// under admission after arrival they read their arguments first (HANDOFF
// flag kHandoffLaterArgsFirst), even when the first call took a slot free
// at its hand-off: a later call's arguments come to the executable, never
// behind a CALL in ninfd's socket, and a slow upload must hold no slot.
AdmissionPlan LaterCallsPlan(AdmissionPlan first);

// When a call following `plan` gives its slot back, given the
// `release_slot` setting (read when the routine returns: the setting is
// live, and a reload applies to the calls under way). Only a call whose
// executable read the arguments first may give it back early: one that
// got its slot first has its arguments' transfer inside its slot already,
// and the arrival bounds (which then hold its memory) never counted it.
SlotRelease ReleaseOf(const AdmissionPlan &plan, std::string_view release_slot);

}  // namespace ninf::server
