// Call plans: one call of an executable described as data before any array
// byte is read. For each parameter the plan says where its bytes come from
// (the call's payload on the socket, the client's shared memory segment, a
// server's store through a data reference) and where its result goes (the
// RESULT frame, in place in the segment, this server's store, or the
// two-phase result kept for a collector). CallServer::ServeCall
// (call_server.cc) then runs the plan: decode -> plan -> receive -> invoke
// -> reply.
//
// The rules that combine the call modes live here and nowhere else, each
// one unit-tested without sockets (tests/runtime/call_plan_test.cc):
//   - shared memory with data references, kept arrays or a two-phase call:
//     NINF_ERR_PROTOCOL (kept data travels as memory descriptors and
//     references as socket bytes; a segment is the client's memory);
//   - a redirected executable (another host than ninfd, launch.h) with kept
//     arrays or a two-phase call: NINF_ERR_NOT_SUPPORTED (kept arrays reach
//     ninfd's store as memory descriptors, which its TCP channel cannot
//     carry);
//   - the ARGS payload must be exactly the IN and INOUT arrays that neither
//     the segment nor a reference brings: NINF_ERR_ARGUMENT_MISMATCH.
//
// Builds on protocol/ only: layout.h (array sizes), shared_memory.h (where
// arrays sit in a segment), ninf.proto's Args and DataRef, status.h. Pure:
// no I/O, no state.
#pragma once

#include <cstdint>
#include <vector>

#include "ninf.pb.h"
#include "protocol/layout.h"
#include "protocol/status.h"

namespace ninf::stub {

// Where a parameter's bytes come from before the routine runs.
enum class Source {
  kScalar,    // a scalar: the routine gets its decoded slot
  kSocket,    // an IN or INOUT array, received from the payload into a buffer
  kStoreRef,  // an IN or INOUT array, fetched from a server's store into a buffer
  kSegment,   // an array in place in the client's shared segment
  kBlank,     // an OUT or WORK array in a buffer of this process, nothing
              // received: zeroes, or this connection's earlier result (buffer.h)
};

// Where a parameter's result goes once the routine has run.
enum class Destination {
  kNone,       // scalars, IN and WORK arrays: nothing goes back
  kSocket,     // the RESULT frame's payload
  kSegment,    // nowhere: the result is in place in the client's segment
  kKeep,       // this server's store; the RESULT frame names the entry
  kCollector,  // the payload of the two-phase RESULT kept on ninfd for the collector
};

struct ParamPlan {
  Source source = Source::kScalar;
  Destination destination = Destination::kNone;
  uint64_t bytes = 0;                  // the array's size; 0 for scalars
  uint64_t segment_offset = 0;         // kSegment: where it sits in the segment
  const wire::DataRef *ref = nullptr;  // kStoreRef: into the request's Args
};

// What a call brings besides its Args message (which says shared memory,
// data references and kept arrays).
struct CallRequest {
  uint64_t payload_bytes = 0;  // the ARGS frame's payload length
  bool two_phase = false;      // ninfd gave the call a store id: the result goes to a collector
  bool redirected = false;     // the executable runs on another host than ninfd
  bool team = false;           // other ranks run the routine beside this one (team.h)
};

struct CallPlan {
  std::vector<ParamPlan> params;  // one per parameter of the interface
  bool shared = false;            // arrays in the client's segment: attach it first
  uint64_t segment_bytes = 0;     // shared: the size the segment must have
  bool two_phase = false;         // a ticket once the arguments are in; the result is kept
  bool team = false;              // share the call with the other ranks before invoking
  uint64_t expected_payload = 0;  // bytes of arrays the ARGS frame carries
};

// Plans the call of `iface` whose array sizes are `layout` and whose ARGS
// message is `args` (the plan points into it: keep it alive). Errors, in
// this order: NINF_ERR_ARGUMENT_MISMATCH for a data reference that is not
// an IN or INOUT array of its size (or names one twice) and for a kept
// parameter that is not an OUT or INOUT array; the combination rules above.
Status PlanCall(const wire::FunctionInterface &iface, const CallLayout &layout,
                const wire::Args &args, const CallRequest &request, CallPlan *plan);

// How the executable's side of one call comes by its job slot: its part
// of ninfd's admission plan (server/admission_plan.h), which the hand-off
// tells it (kHandoffArgsFirst), with what only the executable knows: whether
// this is a handle's later call and whether it began on the slot its last
// call kept (protocol/slot_lease.h). CallServer::ServeFrame runs it.
enum class SlotStep {
  kHeld,                // nothing to ask: granted with the hand-off, or kept (leased)
  kAskBeforeArguments,  // CTL_WANT_SLOT, then read the arguments
  kAskAfterArguments,   // read the arguments, then CTL_WANT_SLOT with their figures
};

struct SlotFacts {
  bool arguments_first = false;  // HANDOFF's kHandoffArgsFirst
  bool later_call = false;       // not the hand-off's first call (a handle's next one)
  bool leased = false;           // later_call only: it began on the kept slot
  bool arguments_in = false;     // the whole ARGS frame is in the socket already
};

struct SlotPlan {
  SlotStep step = SlotStep::kHeld;
  // Tell ninfd the call's arguments are coming (CTL_ARRIVING): a handle's
  // later call admitted after arrival, which ninfd would otherwise take for
  // an idle executable.
  bool report_arriving = false;
  // ...and wait for room under ninfd's arrival bounds before reading them
  // (CTL_ROOM): their bytes are still coming, and a slow upload must not
  // hold memory beyond the bounds. A frame wholly in the socket is in this
  // host's memory already: ninfd counts it without an answer.
  bool ask_room = false;
  // The call waited for nothing (HANDOFF's queue_seconds no longer applies).
  bool no_wait = false;
};

SlotPlan PlanSlot(const SlotFacts &facts);

}  // namespace ninf::stub
