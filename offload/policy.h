// The offload decision as pure functions: whether one LAPACK/BLAS call goes
// to the server or runs locally, and how the measurements of earlier calls
// move the model it is decided on. No I/O, no clock, no globals: the
// runtime (runtime.h) gathers the inputs and unit tests
// (tests/offload/policy_test.cc) call these directly.
#pragma once

#include <optional>
#include <string>

#include "protocol/ninf_errors.h"

namespace ninf::offload {

// What the environment says (docs/offload.md), read once per process.
struct Config {
  bool enabled = true;              // NINF_OFFLOAD=0 turns offloading off
  std::optional<double> min_flops;  // NINF_OFFLOAD_MIN_FLOPS: a fixed threshold
  std::string log;                  // NINF_OFFLOAD_LOG: "" none, "-" stderr, else a file
  double retry_seconds = 10;        // NINF_OFFLOAD_RETRY_SECONDS: local after a dead server
  bool warn_fallback = true;        // NINF_OFFLOAD_WARN=0: no line at the first fallback
  std::string warnings;             // values that did not parse, one line each
};

// Reads the variables through `get` (getenv in the runtime, a table in
// tests). A value that does not parse keeps the default and adds a line to
// `warnings`, which the runtime prints once: a LAPACK routine has no way
// to report a configuration error, and refusing to run would break the
// program over a typo.
Config ParseConfig(const char *(*get)(const char *name));

// Without NINF_OFFLOAD_MIN_FLOPS, calls below this many flops stay local
// whatever the model says: at kAssumedLocalFlopsPerSecond they take about
// 10 ms, the order of a remote call's fixed costs (a connection, its
// authentication, an executable's hand-over), so sending them can only
// lose. 1e8 is dgesv of n ~ 530. An assumption, not a measurement: the
// benchmark (bench/offload.sh) is where to check it.
inline constexpr double kDefaultMinFlops = 1e8;
// Until a local call has been timed, the local speed is assumed to be
// this (flop/s): one core of a 2020s machine on dgemm-rich LAPACK.
inline constexpr double kAssumedLocalFlopsPerSecond = 1e10;

// What earlier calls measured; 0 means not measured yet. Updated by
// NoteRemote and NoteLocal, read by Decide.
struct Model {
  double link_bytes_per_second = 0;    // array bytes / time moving them
  double remote_flops_per_second = 0;  // CalcOrder / the server's compute time
  double local_flops_per_second = 0;   // CalcOrder / a local call's time
  double overhead_seconds = 0;         // a remote call's time beyond moving and computing
  double unreachable_until = 0;        // a clock time: stay local until then
  double measured_at = 0;              // a clock time: the last remote call's
  int failures = 0;                    // remote failures since the last success
};

// One call, as Ninf_estimate saw it.
struct Estimate {
  double flops = 0;  // the IDL's CalcOrder on the call's scalars
  double bytes = 0;  // array bytes out and back
};

enum class Where { kLocal, kRemote };

struct Decision {
  Where where = Where::kLocal;
  std::string why;  // for the log line: the rule that decided
};

// What the runtime knows of a call before estimating it.
struct CallFacts {
  bool workspace_query = false;  // lwork = -1
  // The thread has a Ninf transaction block open (Ninf_transaction_begin):
  // Ninf_call there only records the call and returns at once, with no
  // results, so a LAPACK call in the block must run here.
  bool in_transaction = false;
  // The routine's CalcOrder on the call's sizes (the *Flops functions
  // below), or < 0 when not known: a call under the floor then stays local
  // before any estimate.
  double flops = -1;
};

// Each routine's CalcOrder (stubs/idl/lapack.idl, blas.idl) in the IDL's
// integer arithmetic, computed here so that a call under the floor is
// decided without an estimate: an estimate needs the server's interface,
// a connection the first time, and a tiny call must never wait for one.
// tests/offload/estimate_test.cc holds each equal to Ninf_estimate's.
double DgesvFlops(long long n, long long nrhs);
double DgetrfFlops(long long m, long long n);
double DgetrsFlops(long long n, long long nrhs);
double DposvFlops(long long n, long long nrhs);
double DsyevFlops(long long n);
double DgemmFlops(long long m, long long n, long long k);

// Before any estimate: the rules that need no server (disabled, a
// workspace query, a transaction block, flops known to be under the
// floor, a server known to be down).
// Returns the local decision, or nothing when the call is a candidate for
// offloading.
std::optional<Decision> DecideBeforeEstimate(const Config &config, const Model &model,
                                             const CallFacts &facts, double now);

// With the estimate: NINF_OFFLOAD_MIN_FLOPS decides alone when set;
// otherwise a call under kDefaultMinFlops stays local, and a larger one goes
// remote unless the model predicts it slower there:
//   remote = overhead + bytes / link + flops / remote speed (the local speed
//            while the server's is unknown)
//   local  = flops / local speed (kAssumedLocalFlopsPerSecond until timed)
// An unmeasured link sends the call (it is then measured). The byte
// threshold is the link term: a call whose bytes take longer to move than
// the whole local run never goes. A model kReprobeSeconds old or older is
// measured again with a call it predicts at most 2x slower remotely than
// locally: otherwise one congested moment would keep every later call
// local for good, since local calls measure no link. `now` is a clock time.
Decision DecideWithEstimate(const Config &config, const Model &model, const Estimate &estimate,
                            double now);
inline constexpr double kReprobeSeconds = 60;

// BLAS dgemm's argument checks (reference dgemm.f), column-major: flags
// in NnTtCc, no negative size, leading dimensions of at least the rows.
// BLAS has no INFO and its XERBLA prints where the routine runs, so an
// illegal call stays local and the program sees its own BLAS's message.
bool DgemmLegal(char transa, char transb, int m, int n, int k, int lda, int ldb, int ldc);

// A remote call's measurements (Ninf_call_info's fields). Samples too small
// to say anything (under 64 KiB moved, under a millisecond computed) are
// ignored; the others are smoothed (a weight of 0.3 for the new sample), so
// one slow call does not swing the decision.
struct RemoteSample {
  double bytes = 0;
  double transfer_seconds = 0;  // send + receive on the client
  double flops = 0;
  double compute_seconds = 0;  // the server's
  double total_seconds = 0;
};
Model NoteRemote(Model model, const RemoteSample &sample, double now);
Model NoteLocal(Model model, double flops, double seconds);
// What a failed estimate or call holds off for a while:
//   kServer   every routine: the server is not there (no connection, a
//             broken one, a timeout, a refused key), and asking again for
//             each routine would pay a connect timeout each;
//   kRoutine  this routine: the server is there but does not serve it (no
//             such function, denied, its executable failed, a limit);
//   kNone     nothing: the call's own arguments (a negative dimension,
//             too large for the server), which the next call may not share.
enum class Hold { kNone, kRoutine, kServer };
Hold HoldOf(ninf_error_t error);
// After a failure that holds off (`model` is the routine's, or the
// server's for kServer): local calls until now + retry_seconds, doubled
// with each failure in a row up to kMaxBackoff times, so that a dead
// server costs one connection attempt per interval, not one per call.
inline constexpr int kMaxBackoff = 32;
Model NoteUnreachable(Model model, const Config &config, double now);

}  // namespace ninf::offload
