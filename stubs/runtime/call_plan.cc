#include "stubs/runtime/call_plan.h"

#include <string>

#include "protocol/shared_memory.h"

namespace ninf::stub {
namespace {

// Which parameters the call's data references fill (null elsewhere) and
// which it keeps, checked against the interface; *ref_bytes is what the
// payload does not carry.
Status CheckKeptData(const wire::FunctionInterface &iface, const wire::Args &args,
                     const CallLayout &layout, std::vector<const wire::DataRef *> *refs,
                     std::vector<bool> *keep, uint64_t *ref_bytes) {
  const int nparams = iface.params_size();
  refs->assign(static_cast<std::size_t>(nparams), nullptr);
  keep->assign(static_cast<std::size_t>(nparams), false);
  *ref_bytes = 0;
  for (const wire::DataRef &r : args.refs()) {
    const int i = static_cast<int>(r.param());
    if (r.param() >= static_cast<uint32_t>(nparams) || !IsArray(iface.params(i)) ||
        !SendsArray(iface.params(i)) || (*refs)[i] || r.bytes() != layout.params[i].bytes)
      return Status(NINF_ERR_ARGUMENT_MISMATCH,
                    "a data reference for parameter " + std::to_string(r.param()) +
                        " does not match an IN or INOUT array of its size");
    (*refs)[i] = &r;
    *ref_bytes += r.bytes();
  }
  for (uint32_t k : args.keep()) {
    if (k >= static_cast<uint32_t>(nparams) || !IsArray(iface.params(static_cast<int>(k))) ||
        !ReturnsArray(iface.params(static_cast<int>(k))))
      return Status(NINF_ERR_ARGUMENT_MISMATCH,
                    "only OUT and INOUT arrays can be kept (parameter " + std::to_string(k) + ")");
    (*keep)[k] = true;
  }
  return Status::Ok();
}

// The modes that cannot go together (call_plan.h). A reference to an empty
// array carries no bytes and does not count as kept data here.
Status CheckCombination(const wire::FunctionInterface &iface, const wire::Args &args,
                        const CallRequest &request, uint64_t ref_bytes) {
  const bool keeps = args.keep_size() > 0;
  if (args.shared_memory() && (ref_bytes > 0 || keeps || request.two_phase))
    return Status(NINF_ERR_PROTOCOL, "kept data and shared memory cannot be combined");
  // Kept arrays travel to ninfd's store as memory descriptors, which a TCP
  // channel cannot carry.
  if (request.redirected && (keeps || request.two_phase))
    return Status(NINF_ERR_NOT_SUPPORTED,
                  "'" + iface.name() +
                      "' runs on another host than ninfd (launch_address): it cannot keep "
                      "arrays on the server or serve a two-phase call");
  return Status::Ok();
}

// Where parameter `p`'s bytes come from. A reference wins over the
// segment: in a shared call only one to an empty array gets this far, and
// it is fetched like any other.
Source SourceOf(const wire::Param &p, bool shared, const wire::DataRef *ref) {
  if (!IsArray(p)) return Source::kScalar;
  if (ref) return Source::kStoreRef;
  if (shared && InSharedSegment(p)) return Source::kSegment;
  return SendsArray(p) ? Source::kSocket : Source::kBlank;
}

// Where parameter `p`'s result goes.
Destination DestinationOf(const wire::Param &p, bool shared, bool two_phase, bool keep) {
  if (!ReturnsArray(p)) return Destination::kNone;
  if (keep) return Destination::kKeep;
  if (shared) return Destination::kSegment;
  return two_phase ? Destination::kCollector : Destination::kSocket;
}

}  // namespace

Status PlanCall(const wire::FunctionInterface &iface, const CallLayout &layout,
                const wire::Args &args, const CallRequest &request, CallPlan *plan) {
  std::vector<const wire::DataRef *> refs;
  std::vector<bool> keep;
  uint64_t ref_bytes = 0;
  NINF_RETURN_IF_ERROR(CheckKeptData(iface, args, layout, &refs, &keep, &ref_bytes));
  NINF_RETURN_IF_ERROR(CheckCombination(iface, args, request, ref_bytes));
  const bool shared = args.shared_memory();
  const uint64_t expected_payload = shared ? 0 : layout.send_bytes - ref_bytes;
  if (request.payload_bytes != expected_payload)
    return Status(NINF_ERR_ARGUMENT_MISMATCH,
                  "client sent " + std::to_string(request.payload_bytes) +
                      " bytes of arrays, the interface needs " + std::to_string(expected_payload));
  SharedPlacement placement;
  if (shared) placement = PlaceShared(iface, layout);

  CallPlan out;
  out.shared = shared;
  out.segment_bytes = placement.bytes;
  out.two_phase = request.two_phase;
  out.team = request.team;
  out.expected_payload = expected_payload;
  out.params.resize(static_cast<std::size_t>(iface.params_size()));
  for (int i = 0; i < iface.params_size(); ++i) {
    const wire::Param &p = iface.params(i);
    ParamPlan &pp = out.params[i];
    pp.source = SourceOf(p, shared, refs[i]);
    pp.destination = DestinationOf(p, shared, request.two_phase, keep[i]);
    pp.bytes = layout.params[i].bytes;
    if (pp.source == Source::kSegment) pp.segment_offset = placement.offsets[i];
    pp.ref = refs[i];
  }
  *plan = std::move(out);
  return Status::Ok();
}

SlotPlan PlanSlot(const SlotFacts &facts) {
  // The first call's slot came with the hand-off, unless the executable
  // reads its arguments first; a later call on the kept slot asks nothing.
  if (facts.later_call && facts.leased) return {.step = SlotStep::kHeld, .no_wait = true};
  if (facts.arguments_first)
    return {.step = SlotStep::kAskAfterArguments,
            .report_arriving = facts.later_call,
            .ask_room = facts.later_call && !facts.arguments_in};
  return {.step = facts.later_call ? SlotStep::kAskBeforeArguments : SlotStep::kHeld};
}

}  // namespace ninf::stub
