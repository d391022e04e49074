#include "server/admission_plan.h"

namespace ninf::server {

const char *SlotPathName(SlotPath path) {
  switch (path) {
    case SlotPath::kSlotFirst:
      return "slot_first";
    case SlotPath::kFreeSlotAtHandoff:
      return "free_slot_at_handoff";
    case SlotPath::kArrivalFirst:
      return "arrival_first";
  }
  return "?";
}

AdmissionPlan PlanAdmission(const AdmissionFacts &facts) {
  const bool arrives_first = ArrivesFirst({.order = facts.order,
                                           .two_phase = facts.two_phase,
                                           .direct_launch = facts.direct_launch,
                                           .redirected = facts.redirected});
  if (!arrives_first) return {.path = SlotPath::kSlotFirst};
  return {.path = facts.arguments_in ? SlotPath::kFreeSlotAtHandoff : SlotPath::kArrivalFirst};
}

AdmissionPlan NoFreeSlot(AdmissionPlan plan) {
  if (plan.path == SlotPath::kFreeSlotAtHandoff) plan.path = SlotPath::kArrivalFirst;
  return plan;
}

AdmissionPlan LaterCallsPlan(AdmissionPlan first) { return NoFreeSlot(first); }

SlotRelease ReleaseOf(const AdmissionPlan &plan, std::string_view release_slot) {
  if (plan.ArgumentsFirst() && release_slot == "computed") return SlotRelease::kComputed;
  return SlotRelease::kResult;
}

}  // namespace ninf::server
