// Transaction blocks (docs/transactions.md): between Ninf_transaction_begin
// and Ninf_transaction_end a thread's Ninf_call records its call, fully
// prepared (interface fetched, scalars encoded, extents computed), and
// returns at once. At the end the block runs as a dataflow graph:
//
//   record   RemoteCall prepared, strings copied, connection closed
//   graph    transaction_graph.h: edges from overlapping extents
//   copy     every region the block writes is copied once into the block's
//            own memory; calls read and write there, never the caller's
//            arrays, so a failed block leaves them as they were
//   plan     with a metaserver, transaction_plan.h's HEFT over the
//            metaserver's per-server predictions (PLACE with breakdown);
//            each call is placed again when it becomes ready, the plan's
//            server first unless another is clearly better
//   run      ready calls at once, each on a thread of its own (calls wait
//            on sockets, not the CPU); a failed call is re-placed on
//            another server by RemoteCall; calls that depend on a call
//            that failed for good are not run
//   commit   only when every call succeeded: the block's memory is copied
//            back into the caller's, except the ranges marked discarded
//
// One open block per thread; the outcome of the thread's last block stays
// readable until the next one begins. Thread-safe in that sense only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "client/ninf.h"
#include "client/remote_call.h"
#include "protocol/status.h"

namespace ninf::client {

// Opens this thread's block. Errors: NINF_ERR_INVALID_ARGUMENT when one is
// already open.
Status BeginTransaction();

// Whether this thread has an open block (Ninf_call then records).
bool InTransaction();

// The refusal of Ninf_call_async inside a block: it would run at once, out
// of the block's order.
Status AsyncInTransaction();

// Adds a prepared call to this thread's block. The block owns it.
Status RecordCall(std::unique_ptr<RemoteCall> call);

// Marks the recorded array that starts at `array` as intermediate: its
// final value is not written back. Errors: NINF_ERR_INVALID_ARGUMENT when
// no block is open or no recorded array of it starts there.
Status DiscardInTransaction(const void *array);

// Runs and closes this thread's block. Errors: NINF_ERR_INVALID_ARGUMENT
// without an open block; else the first failed call's error, its detail
// naming the call ("call 3 (dmmul): ...").
Status EndTransaction();

// The thread's last ended block: how many calls it had (-1: none yet),
// and each call's outcome and times.
int LastBlockCalls();
Status LastBlockCall(int index, Ninf_call_info *info, std::string *detail);

}  // namespace ninf::client
