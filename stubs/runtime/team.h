// The ranks of a parallel executable (Backend "MPI", ninf_stub.h's
// ninf_stub_team): what rank 0 passes on for each call, and the loop every
// other rank runs.
//
// For each call rank 0 shares, in this order (every share is a broadcast
// from rank 0, ninf_stub_team.share):
//
//   TeamMessage            kind = kTeamCall, threads per rank, args_bytes
//   args_bytes bytes       a ninf.wire.Args holding only the IN scalars
//   each IN/INOUT array    in parameter order, its whole extent (not for
//                          distribute "root")
//
// and, when it stops serving, TeamMessage{kind = kTeamExit, exit_status}.
// The other ranks decode the scalars and size the arrays exactly as rank 0
// did (ComputeLayout on the same interface), so only bytes that rank 0 has
// already checked ever travel. OUT and WORK arrays hold what they hold on
// rank 0: zeroes, or this client's earlier results, never another client's;
// the results of ranks other than 0 are dropped.
#pragma once

#include <cstdint>
#include <vector>

#include "ninf.pb.h"
#include "protocol/layout.h"
#include "protocol/status.h"
#include "stubs/runtime/ninf_stub.h"

namespace ninf::stub {

enum TeamKind : uint32_t { kTeamCall = 1, kTeamExit = 2 };

struct TeamMessage {
  uint32_t kind = 0;
  uint32_t threads = 0;  // kTeamCall: threads each rank may use
  uint64_t args_bytes = 0;
  int32_t exit_status = 0;  // kTeamExit
  // kTeamCall: the first call of a client; what the ranks' buffers hold is
  // the previous client's from now on (buffer.h), as on rank 0.
  uint32_t new_client = 0;
};

// Whether the team has ranks besides rank 0 (a team of one shares nothing).
inline bool Shares(const ninf_stub_team *team) { return team && team->size > 1; }

// Threads each rank may use when the call was granted `threads` (cores) in
// all: at least one.
uint32_t ThreadsPerRank(uint32_t threads, const ninf_stub_team *team);

// Rank 0: passes one call on. `scalars` holds the call's IN scalars (as the
// client sent them); `argv` the routine's arguments, arrays included;
// `new_client`: the first call of a connection.
Status ShareCall(const ninf_stub_team *team, const wire::FunctionInterface &iface,
                 const wire::Args &scalars, uint32_t threads_per_rank, bool new_client,
                 const std::vector<void *> &argv, const CallLayout &layout);

// Rank 0: tells the other ranks to stop with `exit_status`.
void ShareExit(const ninf_stub_team *team, int exit_status);

// Every rank but 0: runs the routine for each call rank 0 shares, until it
// says stop; returns rank 0's exit status. A failure here (memory, a broken
// team) ends the process at once with status 1: the launcher then takes the
// whole job down, rank 0 included, and ninfd sees the call fail.
int ServeTeam(const wire::FunctionInterface &iface, ninf_stub_invoke_fn invoke,
              const ninf_stub_team *team);

}  // namespace ninf::stub
