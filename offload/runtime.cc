#include "offload/runtime.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "offload/policy.h"

namespace ninf::offload {
namespace {

thread_local int nesting = 0;

// This thread's last successful estimate of each routine (Call::scalars).
struct LastEstimate {
  std::vector<long long> scalars;
  Ninf_call_info info;
};
using Estimates = std::map<const char *, LastEstimate>;
// A plain pointer, which a thread's exit does not destroy: a LAPACK call
// from a later thread-local destructor or an atexit handler finds null (and
// allocates again) instead of a destroyed map. The owner frees it at exit.
thread_local Estimates *last_estimates = nullptr;
struct EstimatesOwner {
  ~EstimatesOwner() {
    delete last_estimates;
    last_estimates = nullptr;
  }
};
thread_local EstimatesOwner estimates_owner;

Estimates &ThreadEstimates() {
  if (!last_estimates) {
    last_estimates = new Estimates;
    (void)&estimates_owner;  // constructed here, so destroyed at this thread's exit
  }
  return *last_estimates;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

const char *GetEnv(const char *name) { return std::getenv(name); }

// Process-wide state, built on first use (the first offloadable call), so
// that a program that never calls LAPACK pays nothing at start.
class State {
 public:
  static State &Get() {
    // Never destroyed: entry points may run from other libraries' static
    // destructors or atexit handlers after ours would have been.
    static State *state = new State;
    return *state;
  }

  const Config &config() const { return config_; }

  // The model is read at a call's start (a snapshot to decide on) and
  // updated at its end by a function of the stored one, under the lock: a
  // hold or a failure count another thread set meanwhile is kept.
  Model ModelOf(const char *routine) {
    std::lock_guard<std::mutex> lock(mutex_);
    return models_[routine];
  }
  template <typename F>
  void UpdateModel(const char *routine, F update) {
    std::lock_guard<std::mutex> lock(mutex_);
    Model &m = models_[routine];
    m = update(m);
  }
  // The server's own hold (Hold::kServer): failures of any routine.
  Model server() {
    std::lock_guard<std::mutex> lock(mutex_);
    return server_;
  }
  template <typename F>
  void UpdateServer(F update) {
    std::lock_guard<std::mutex> lock(mutex_);
    server_ = update(server_);
  }

  bool logging() const { return log_ != nullptr; }
  // The first call in the process that meant to go to the server and ran
  // locally instead says so on stderr, once: without it a wrong
  // NINF_SERVER only shows as a slow program. (Not when every call is
  // logged to stderr already.)
  void WarnFallbackOnce(const char *routine, const std::string &why) {
    if (!config_.warn_fallback || log_ == stderr || warned_.exchange(true)) return;
    std::fprintf(stderr,
                 "ninf_offload: %s ran locally, not on the server: %s. Later calls the server "
                 "cannot take run locally too, without this line (NINF_OFFLOAD_LOG=1 shows "
                 "every call; NINF_OFFLOAD_WARN=0 turns this line off)\n",
                 routine, why.c_str());
  }
  void Log(const std::string &line) {
    if (!log_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    std::fputs(line.c_str(), log_);
    std::fflush(log_);
  }

 private:
  State() : config_(ParseConfig(GetEnv)) {
    if (!config_.log.empty()) {
      log_ = config_.log == "-" ? stderr : std::fopen(config_.log.c_str(), "a");
      if (!log_)
        std::fprintf(stderr, "ninf_offload: cannot open NINF_OFFLOAD_LOG file '%s': %s\n",
                     config_.log.c_str(), std::strerror(errno));
    }
    if (!config_.warnings.empty())
      std::fprintf(stderr, "ninf_offload: %s", config_.warnings.c_str());
  }

  Config config_;
  std::FILE *log_ = nullptr;
  std::atomic<bool> warned_{false};
  std::mutex mutex_;
  std::map<std::string, Model> models_;
  Model server_;
};

std::string Quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += (c == '\n') ? ' ' : c;
  }
  return out + "\"";
}

// One line per call, key=value as the daemons' logs (docs/offload.md).
void LogLine(State &state, const Call &call, const char *where, const char *server, double flops,
             double bytes, double seconds, const std::string &why) {
  if (!state.logging()) return;
  char head[512];
  std::snprintf(head, sizeof head,
                "ninf_offload pid=%ld routine=%s where=%s server=%s flops=%.3g bytes=%.3g "
                "seconds=%.6f why=",
                static_cast<long>(getpid()), call.routine, where, *server ? server : "-", flops,
                bytes, seconds);
  state.Log(head + Quote(why) + "\n");
}

// A failure that holds the routine, or every routine, off for a while.
void NoteFailure(State &state, const Call &call, ninf_error_t error) {
  const Config &config = state.config();
  const double now = Now();
  auto hold = [&](const Model &m) { return NoteUnreachable(m, config, now); };
  switch (HoldOf(error)) {
    case Hold::kNone:
      return;
    case Hold::kRoutine:
      state.UpdateModel(call.routine, hold);
      return;
    case Hold::kServer:
      state.UpdateServer(hold);
      return;
  }
}

double RunLocal(const Call &call, bool *ran) {
  *ran = true;
  const double start = Now();
  {
    LocalScope scope;
    call.local();
  }
  return Now() - start;
}

}  // namespace

bool Nested() { return nesting > 0; }
LocalScope::LocalScope() { ++nesting; }
LocalScope::~LocalScope() { --nesting; }

void *LocalSymbol(const char *name) {
  // Looked up once per name: the LAPACKE entry points ask again on every
  // call they hand to the program's own LAPACKE.
  static std::mutex mutex;
  static auto *found = new std::map<std::string, void *>;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = found->find(name); it != found->end()) return it->second;
  void *p = dlsym(RTLD_NEXT, name);
  // Not behind us in the lookup order (a program linked without -llapack
  // that calls LAPACK only through this library): the system's.
  for (const char *lib : {"liblapack.so.3", "libblas.so.3", "liblapacke.so.3"}) {
    if (p) break;
    if (void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL)) p = dlsym(h, name);
  }
  if (p) {
    (*found)[name] = p;
    return p;
  }
  std::fprintf(stderr,
               "ninf_offload: no local %s to run: link the program with -llapack -lblas "
               "(after -lninf_offload), or install liblapack3\n",
               name);
  std::abort();
}

namespace {

// The estimate of `call` (the last one of this thread when the scalars are
// the same); false, with why, when there is none (no interface, no server,
// or arguments the interface refuses: a negative n).
bool EstimateOf(State &state, const Call &call, Ninf_call_info *estimate, std::string *why) {
  Estimates &last_estimates = ThreadEstimates();
  auto last = last_estimates.find(call.routine);
  if (!call.scalars.empty() && last != last_estimates.end() &&
      last->second.scalars == call.scalars) {
    *estimate = last->second.info;
    return true;
  }
  if (call.estimate(estimate) == 0) {
    if (!call.scalars.empty()) last_estimates[call.routine] = LastEstimate{call.scalars, *estimate};
    return true;
  }
  const auto error = static_cast<ninf_error_t>(Ninf_get_error());
  *why = std::string("no estimate: ") + Ninf_error_string(error) + ": " + Ninf_get_error_detail();
  NoteFailure(state, call, error);
  state.WarnFallbackOnce(call.routine, *why);
  return false;
}

// The caller's INOUT arrays (and INFO) as they were before a remote call,
// which may have written part of a result into them before it failed: the
// local run starts from them.
class SavedInputs {
 public:
  explicit SavedInputs(const Call &call) : call_(call), info_(call.info ? *call.info : 0) {
    saved_.reserve(call.inout.size());
    for (const Call::Span &s : call.inout) {
      const auto *p = static_cast<const unsigned char *>(s.data);
      saved_.emplace_back(p, p + s.bytes);
    }
  }
  void Restore() const {
    for (std::size_t i = 0; i < saved_.size(); ++i)
      std::memcpy(call_.inout[i].data, saved_[i].data(), saved_[i].size());
    if (call_.info) *call_.info = info_;
  }

 private:
  const Call &call_;
  int info_;
  std::vector<std::vector<unsigned char>> saved_;
};

// What a remote call that answered teaches the models.
void NoteAnswer(State &state, const Call &call, const Ninf_call_info &info) {
  state.UpdateServer([](const Model &) { return Model{}; });  // it answered
  const RemoteSample sample{
      static_cast<double>(info.send_bytes + info.recv_bytes),
      info.send_seconds + info.recv_seconds,
      info.work_flops,
      info.compute_seconds,
      info.total_seconds,
  };
  const double now = Now();
  state.UpdateModel(call.routine, [&](const Model &m) { return NoteRemote(m, sample, now); });
}

// The call sent to the server; run locally from the caller's inputs when
// it fails, or when the server's LAPACK found an illegal argument.
void RunRemote(State &state, const Call &call, const Estimate &est, const Decision &decision,
               bool *ran) {
  const SavedInputs saved(call);
  const double start = Now();
  const int rc = call.remote();
  *ran = rc == 0;
  const double remote_seconds = Now() - start;
  if (rc != 0) {
    // The caller's data back first: whatever throws below, the local run
    // (here or in Run's catch) starts from it.
    saved.Restore();
    const auto error = static_cast<ninf_error_t>(Ninf_get_error());
    std::string why = "remote call failed (" + std::string(Ninf_error_string(error)) + ": " +
                      Ninf_get_error_detail() + "), run locally";
    NoteFailure(state, call, error);
    state.WarnFallbackOnce(call.routine, why);
    double seconds = RunLocal(call, ran);
    LogLine(state, call, "local", "", est.flops, est.bytes, seconds, why);
    return;
  }
  Ninf_call_info info{};
  Ninf_get_call_info(&info);
  NoteAnswer(state, call, info);
  if (call.info && *call.info < 0) {
    // An illegal argument the server's LAPACK found: the caller gets the
    // local routine's report of it (XERBLA's message, the same INFO).
    const std::string why = "remote INFO " + std::to_string(*call.info) +
                            " (an illegal argument): run locally for LAPACK's own report";
    saved.Restore();
    double seconds = RunLocal(call, ran);
    LogLine(state, call, "local", info.server, est.flops, est.bytes, seconds, why);
    return;
  }
  LogLine(state, call, "remote", info.server, est.flops, est.bytes, remote_seconds, decision.why);
}

// Run's body; *ran says whether the call has run (here or there), so that
// an exception thrown after it (memory for a log line) does not run it twice.
void RunChecked(const Call &call, bool *ran) {
  // An entry point reached from a local routine (OpenBLAS's LAPACK calls
  // dgemm_ thousands of times): no decision, no line, no lock.
  if (Nested()) {
    RunLocal(call, ran);
    return;
  }
  State &state = State::Get();
  const Config &config = state.config();
  Model model = state.ModelOf(call.routine);
  // Held off while either this routine or the whole server is.
  Model gate = model;
  gate.unreachable_until = std::max(model.unreachable_until, state.server().unreachable_until);
  if (call.local_only) {
    double seconds = RunLocal(call, ran);
    LogLine(state, call, "local", "", 0, 0, seconds, call.local_only);
    return;
  }
  const CallFacts facts{call.workspace_query, Ninf_transaction_active() == 1, call.flops};
  if (auto early = DecideBeforeEstimate(config, gate, facts, Now())) {
    double seconds = RunLocal(call, ran);
    LogLine(state, call, "local", "", call.flops > 0 ? call.flops : 0, 0, seconds, early->why);
    return;
  }
  Ninf_call_info estimate{};
  if (std::string why; !EstimateOf(state, call, &estimate, &why)) {
    // The local routine answers, as it would have anyway.
    double seconds = RunLocal(call, ran);
    LogLine(state, call, "local", "", 0, 0, seconds, why);
    return;
  }
  const Estimate est{estimate.work_flops,
                     static_cast<double>(estimate.send_bytes + estimate.recv_bytes)};
  const Decision decision = DecideWithEstimate(config, model, est, Now());
  if (decision.where == Where::kLocal) {
    double seconds = RunLocal(call, ran);
    state.UpdateModel(call.routine,
                      [&](const Model &m) { return NoteLocal(m, est.flops, seconds); });
    LogLine(state, call, "local", "", est.flops, est.bytes, seconds, decision.why);
    return;
  }
  RunRemote(state, call, est, decision, ran);
}

}  // namespace

void Run(const Call &call) {
  // No exception crosses into the caller's Fortran or C: whatever fails
  // here (memory for the copies of the arrays), the local routine runs.
  bool ran = false;
  try {
    RunChecked(call, &ran);
  } catch (...) {
    if (!ran) {
      LocalScope scope;
      call.local();
    }
  }
}

}  // namespace ninf::offload
