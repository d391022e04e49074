// What one load-test call does: the seed paper's two workloads (004, 4.1),
// each a real remote call through the public client API whose answer is
// checked, so that a load test never counts a wrong result as done.
//
//   linpack  dgesv at size n on a random matrix (seeded per call), residual
//            ||Ax - b|| / (||A|| ||x|| n eps) below 16;
//   linpack-x  the standard library's `linpack`, the Ninf paper's own call:
//            A and b go in, only x comes back (dgesv also returns the LU
//            factors: twice the bytes); the same data and check;
//   ep       NAS EP with 2^m pairs, sx and sy against the NAS reference
//            where one is known (classes S, W, A), else the counts summing
//            to the polar method's pi/4 of the pairs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "client/ninf.h"

namespace ninf::loadtest {

enum class WorkloadKind { kLinpack, kLinpackX, kEp };

// "linpack", "linpack-x" or "ep"; false for anything else.
bool ParseWorkload(const std::string &text, WorkloadKind *out);
const char *WorkloadName(WorkloadKind kind);

struct CallResult {
  bool ok = false;
  std::string outcome;  // "ok", "error", "wrong", "unreachable" (could not connect)
  int code = 0;         // the Ninf error code of an error
  std::string detail;   // the error text, or what was wrong
  Ninf_call_info info{};
};

class Workload {
 public:
  virtual ~Workload() = default;
  // One call of the workload's function, named `prefix` + function
  // ("ninf://host:port/" for a given server, "" for the default server or
  // the metaserver's placement); `seed` varies its data.
  virtual CallResult Call(const std::string &prefix, uint64_t seed) = 0;
  // Floating-point operations of one call (the seed's Mflops count).
  virtual double Flops() const = 0;
};

// `size`: n for linpack and linpack-x, m for ep.
std::unique_ptr<Workload> MakeWorkload(WorkloadKind kind, int size);

}  // namespace ninf::loadtest
