// The dependency graph of a transaction block (docs/transactions.md): from
// the memory each recorded call reads and writes to the edges that running
// the block as a dataflow graph must respect, and to where each byte a call
// reads comes from. Pure functions over address ranges, no sockets; tested
// in tests/client/transaction_graph_test.cc.
//
// Calls are numbered in program order. Call j depends on an earlier call i
// when their extents overlap (any byte in common, not only equal pointers)
// and at least one of them writes:
//
//   read-after-write   i writes, j reads     j needs i's result
//   write-after-read   i reads, j writes     j must not clobber i's input
//   write-after-write  both write            the later value must win
//
// Scalars passed by value never create edges: they are copied when the
// call is recorded.
#pragma once

#include <cstdint>
#include <vector>

namespace ninf::client {

// One array argument of a call: the bytes [begin, end) of the caller's
// memory, and whether the call reads them (IN, INOUT) or writes them (OUT,
// INOUT). WORK arrays never leave the server and are not uses.
struct ArrayUse {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  bool reads = false;
  bool writes = false;
};

// What one call touches, in the order of its parameters.
using CallUses = std::vector<ArrayUse>;

enum class Hazard { kReadAfterWrite, kWriteAfterRead, kWriteAfterWrite };

struct Dependency {
  int from = 0;  // the earlier call
  int to = 0;    // the later one
  Hazard hazard = Hazard::kReadAfterWrite;
};

// Where bytes a call reads come from, or where final values go: `from` is
// the call that last wrote them before the reader (kClient: the caller's
// memory as it was before the block); `to` is the reading call (kClient:
// the caller's memory at the end of the block, i.e. the final value).
inline constexpr int kClient = -1;
struct Flow {
  int from = kClient;
  int to = kClient;
  uintptr_t begin = 0;
  uintptr_t end = 0;
  uint64_t bytes() const { return end - begin; }
};

struct BlockGraph {
  int calls = 0;
  // Every ordered pair (i < j) that must run in order, once per pair: the
  // first hazard found names it (read-after-write before the others).
  std::vector<Dependency> dependencies;
  // Each byte read by a call, attributed to its last writer before that
  // call (or the client), and each byte written in the block, attributed
  // to its last writer (to = kClient). Flows of one (from, to) pair are
  // kept as separate ranges, in address order.
  std::vector<Flow> flows;

  // Calls that must finish before `call` starts.
  std::vector<int> Predecessors(int call) const;
};

// Builds the graph of calls[0..n) in program order. Empty ranges (zero-size
// arrays) touch nothing. Cost: O(n^2 * k^2) for k arrays per call, fine for
// the blocks of tens to hundreds of calls a program records.
BlockGraph BuildBlockGraph(const std::vector<CallUses> &calls);

// Merges overlapping or touching ranges: the memory a block touches.
std::vector<ArrayUse> MergeRanges(std::vector<ArrayUse> ranges);

}  // namespace ninf::client
