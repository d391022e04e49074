// What every offloaded entry point shares: the configuration (read once),
// the per-routine model under a lock, the log, the local routines found
// behind this library, and Run, which takes one call through the decision.
//
// Builds on policy.h (the decision) and the public client API
// (client/ninf.h: Ninf_estimate, Ninf_call, Ninf_get_call_info). The entry
// points themselves are in lapack.cc (Fortran), lapacke.cc (LAPACKE) and
// cblas.cc (CBLAS).
//
// Thread safety: entry points may be called from any number of threads;
// libninf is thread-safe, the model and the log are behind a mutex, and
// the nesting depth is per thread.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "client/ninf.h"

namespace ninf::offload {

// Whether this thread is inside a routine this library runs locally. An
// entry point reached from there (OpenBLAS's dsyev_ calling dgemm_, or
// liblapacke's LAPACKE_dgesv calling dgesv_, through the PLT, which finds
// this library first) runs its local routine at once: no decision, no log
// line, and never a remote call from inside a local one.
bool Nested();

// Marks the thread as inside a local routine for its lifetime.
class LocalScope {
 public:
  LocalScope();
  ~LocalScope();
  LocalScope(const LocalScope &) = delete;
  LocalScope &operator=(const LocalScope &) = delete;
};

// The routine `name` that this library shadows: the next definition after
// it in the program's lookup order (dlsym(RTLD_NEXT): the program's
// -llapack, or under LD_PRELOAD whatever the program was linked with),
// else the system's liblapack.so.3 / libblas.so.3 / liblapacke.so.3. A
// routine found nowhere is fatal (message, abort): a LAPACK routine has no
// way to report it, and the program could not have run without one.
void *LocalSymbol(const char *name);

template <typename Fn>
Fn *Local(const char *name) {
  return reinterpret_cast<Fn *>(LocalSymbol(name));
}

// One call of one routine, described for Run.
struct Call {
  const char *routine = "";  // the IDL name on the server ("dgesv") and in the log
  bool workspace_query = false;
  // The routine's CalcOrder on this call's sizes (policy.h's *Flops), < 0
  // when not known: a call under the floor is decided without an estimate.
  double flops = -1;
  // Set when the entry point already knows the call must run locally (BLAS
  // arguments that its XERBLA would refuse): the reason for the log line.
  const char *local_only = nullptr;
  // Ninf_estimate and Ninf_call with the routine's IDL argument list.
  std::function<int(Ninf_call_info *)> estimate;
  // The scalars the estimate depends on (sizes, leading dimensions, flags).
  // A call with the same ones as this thread's previous call of the routine
  // reuses that estimate: a loop of small calls then pays a comparison, not
  // an estimate, per call.
  std::vector<long long> scalars;
  std::function<int()> remote;
  // The shadowed routine with the caller's own arguments.
  std::function<void()> local;
  // The caller's memory a remote call writes directly (INOUT and OUT
  // arrays; a packed block is written back only after success and is not
  // here): copied before it and put back if it fails or reports an illegal
  // argument, so the local run that follows starts from the caller's data
  // and leaves what LAPACK would leave.
  struct Span {
    void *data;
    std::size_t bytes;
  };
  std::vector<Span> inout;
  // LAPACK's INFO, or null (BLAS). A remote INFO < 0 (an illegal argument)
  // is run again locally, so that the caller sees the local XERBLA message
  // and the local INFO, exactly as without this library.
  int *info = nullptr;
};

// Decides, runs the call where decided, falls back to the local routine
// when the server fails, notes the measurements and writes the log line.
void Run(const Call &call);

}  // namespace ninf::offload
