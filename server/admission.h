// Which calls run, with how many threads, and who goes next: ninfd's
// scheduler, as pure logic on plain values (no sockets, processes, libuv or
// clock of its own: the caller passes `now`), unit-tested in
// tests/server/admission_test.cc.
//
// Why threads are budgeted at all: on an SMP server, throughput collapses
// once (running calls x threads per call) exceeds the processors (seed paper
// 004, Fig. 6). Three budgets, the `thread_budget` setting:
//
//   fixed     every call gets `threads_per_job` threads, whatever runs
//             beside it (reproduces Fig. 6; oversubscribes on purpose);
//   split     every call gets cores / slots threads: never oversubscribes,
//             but a client alone uses only a slot's share of the machine;
//   adaptive  a call gets the cores that are free when it starts, shared
//             with the demand seen lately (calls running or waiting in the
//             last `window` seconds), and waits while no core is free. One
//             client alone gets every core; c clients in a closed loop get
//             cores / c each, as `split` would; nothing oversubscribes.
//
// The demand term is what makes `adaptive` better than "take every free
// core": with two clients in a closed loop, a greedy first call takes both
// cores, the second waits, and the pair runs one call at a time at the
// poorer parallel efficiency of two threads (measured: 27 GF/s, against 39
// for two one-thread calls side by side on this machine's dgesv n = 1500).
//
// Brief calls hold no core (work-conserving admission). A call predicted
// to compute for well under a scheduling quantum (kBriefSeconds; IsBrief)
// is gated by the slots alone, under every budget: it gets one thread,
// holds no core of the budget and is not part of the demand. Gating it by
// cores cost microsecond calls half their rate (16 null clients on 2 cores
// waited 14 at a time for a core each used for microseconds: 38.7
// thousand calls/s against 78.4 thousand ungated, bench/results/peers.md),
// while a routine that uses its cores for milliseconds (dgesv, ep) keeps
// its gate and Fig. 6 keeps its shape. A brief call also passes queued
// calls that wait for cores (not for a slot): it takes none of theirs.
//
// Queue order, the `queue_order` setting: `fcfs`, or `sjf` (seed 004, 5.2):
// the call with the smallest arrival + predicted run time goes first, the
// prediction being the client's CalcOrder over the function's measured
// speed, times `sjf_aging`. The arrival term is the aging: a call is
// overtaken only by calls that arrived less than sjf_aging x its predicted
// run time after it, so a large call is never starved. 8 by default: with 1
// small calls gained nothing (they overtake only the large calls that came
// in the last large call's predicted time, less than the queue's age), with
// 8 their waits fell by 40 % and the large calls' longest wait stayed under
// 2x FCFS's, without aging a large call waited 7-17x FCFS's longest
// (bench/results/loadtest_sjf.md). Calls without a prediction count as
// instant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace ninf::server {

enum class ThreadBudget { kFixed, kSplit, kAdaptive };
enum class QueueOrder { kFcfs, kSjf };

// "fixed", "split", "adaptive" / "fcfs", "sjf"; false for anything else.
bool ParseThreadBudget(std::string_view text, ThreadBudget *out);
bool ParseQueueOrder(std::string_view text, QueueOrder *out);
const char *ThreadBudgetName(ThreadBudget budget);
const char *QueueOrderName(QueueOrder order);

// Job slots from the `slots` setting: the setting itself, or `cores` when it
// is 0. Always at least 1.
int ResolveSlots(int64_t slots_setting, int cores);

// Threads per job from the `threads_per_job` setting: the setting itself, or
// max(1, cores / slots) when it is 0 (the `split` budget).
int ResolveThreadsPerJob(int64_t threads_setting, int cores, int slots);

struct SchedulerConfig {
  int cores = 1;
  int slots = 1;          // calls that run at once, whatever the budget
  int fixed_threads = 1;  // kFixed's threads per call
  ThreadBudget budget = ThreadBudget::kAdaptive;
  QueueOrder order = QueueOrder::kFcfs;
  std::size_t queue_limit = 1024;
  double demand_window_seconds = 2;  // kAdaptive: how long a peak of demand is remembered
  double sjf_aging = 8;              // kSjf: the key is arrival + sjf_aging x predicted seconds
};

// The threads a call gets when it runs alone: what --status shows as
// threads_per_job and what the metaserver's speed calibration uses.
int LoneCallThreads(const SchedulerConfig &config);

// kAdaptive's threads for a call starting now: its share of the cores given
// the demand (at least 1), no more than the free cores. 0 when no core is
// free (the call must wait).
int AdaptiveThreads(int cores, int threads_held, int demand);

// Below this predicted compute time a call is brief: a fraction of Linux's
// scheduling quantum (CFS gives a runnable task 0.75-6 ms before another
// runs), so a brief call sharing a core with a running routine delays it
// by about what the call's own messages would.
inline constexpr double kBriefSeconds = 0.001;
// Completed calls a function needs before its measured history may call
// its calls brief: one call says little, and the first calls start cold.
inline constexpr uint64_t kBriefHistory = 3;

// Whether a call is brief: its prediction (CalcOrder over the function's
// measured speed, seconds; 0: none) is under kBriefSeconds, or, with no
// prediction, the function's recent compute time (a smoothed mean over
// `recent_calls` completed calls) is. Nothing known: not brief.
bool IsBrief(double predicted_seconds, double recent_compute_seconds, uint64_t recent_calls);
// Whether a call granted as brief (`cores` 0) computed for `compute_seconds`
// (its CALL_DONE's), not less than kBriefSeconds: its handle's kept slot
// then ends, so that the next call is admitted as what it is.
bool OutgrewBrief(int cores, double compute_seconds);

// A call asking for a slot.
struct CallDemand {
  uint64_t id = 0;
  double predicted_seconds = 0;  // its run time, for kSjf (0: unknown)
  int max_threads = 0;           // kAdaptive: the most it can use (0: any number)
  // A parallel call (an MPI job of this many ranks, one core each): it
  // starts only when that many cores are free, under every budget, and
  // holds them all (at most `cores`: more ranks than cores share them).
  int ranks = 0;
  // Whose call it is (users.h; "": no user) and that user's quotas (0: no
  // cap): at most `user_slots` of its calls hold a slot at once, however
  // idle the server (a hard cap, so that a user's share is the same on a
  // quiet and a busy day), and at most `user_queued` wait.
  std::string user{};
  int user_slots = 0;
  std::size_t user_queued = 0;
  // kSjf's aging counts from the CALL's arrival (`arrived`, on `now`'s
  // clock; negative: now), not from the moment the call asks for its slot:
  // under admission after arrival a call asks once its arguments are in,
  // and a slow link must not make it younger. `transfer_seconds`: what the
  // call still has to move once it has computed (its result over the
  // client's measured throughput), which keeps its client waiting as much
  // as its run time does, so SJF counts it (0: unknown or none).
  double arrived = -1;
  double transfer_seconds = 0;
  // Predicted to compute for less than kBriefSeconds (IsBrief): it needs a
  // slot, but no core (never with ranks).
  bool brief = false;
};

// The transfer still ahead of a call: `result_bytes` at the rate its
// arguments came in (`received_bytes` in `receive_seconds`). 0 when the rate
// is unknown (too few bytes or too short a time to say: a call whose
// arguments were already in the socket's buffer measures memory, not the
// link).
double TransferSecondsAhead(uint64_t result_bytes, uint64_t received_bytes, double receive_seconds);

// A call that may start now, with its threads and the cores of the budget
// it holds (0: a brief call).
struct Grant {
  uint64_t id = 0;
  int threads = 1;
  int cores = 1;
};

// Admission of calls into slots and cores. Calls are named by an opaque id.
// Not thread-safe: the daemon's event loop is its only user.
class Admission {
 public:
  enum class Decision {
    kRun,            // the call holds a slot (and its threads) now
    kQueue,          // the call waits; Next() hands it out later
    kReject,         // the queue is full
    kUserQueueFull,  // the call's user has user_queued calls waiting already
  };

  explicit Admission(const SchedulerConfig &config);

  // A new call arrives. It runs at once only if it may start, its user is
  // under its slot quota and nobody who may start is waiting before it;
  // then *threads is its thread count and *cores (if given) the cores of
  // the budget it holds (0: a brief call), what Release takes back.
  Decision Offer(const CallDemand &call, double now, int *threads, int *cores = nullptr);
  // The call runs at once if Offer would run it (then true, *threads its
  // threads, *cores its cores); otherwise nothing changes but the demand
  // noted (false).
  bool TryRun(const CallDemand &call, double now, int *threads, int *cores = nullptr);

  // Before a call admitted after arrival is handed over: whether its
  // Offer, once its arguments are in, would be refused (kReject,
  // kUserQueueFull) as things stand, counting the calls already arriving
  // (`arriving`, of them `user_arriving` the call's user's) as waiting;
  // kQueue otherwise. The refusal is made while ninfd still has the client's
  // connection, with the message and counting of a refused call.
  Decision Precheck(const CallDemand &call, std::size_t arriving, std::size_t user_arriving) const;

  // A call of `user` that held a slot and `cores` cores (its Grant's; 0: a
  // brief call) has ended.
  void Release(int cores, const std::string &user = {});

  // The queued call that goes next, if one may start now; it then holds its
  // slot and threads. A call whose user holds its quota of slots is passed
  // over (it does not block the users behind it). Call it after Release()
  // until it returns nothing.
  std::optional<Grant> Next(double now);

  // Removes a queued call (its client went away). False if it is not queued.
  bool Withdraw(uint64_t id);

  // Empties the queue and returns its calls in the order they would have
  // run (shutdown).
  std::vector<uint64_t> TakeQueue();

  const SchedulerConfig &config() const { return config_; }
  int slots() const { return config_.slots; }
  int running() const { return running_; }
  int threads_held() const { return threads_held_; }
  int brief_running() const { return brief_running_; }
  std::size_t queued() const { return queue_.size(); }
  std::size_t queue_limit() const { return config_.queue_limit; }
  // Calls of `user` holding a slot / waiting now.
  int running_of(const std::string &user) const;
  std::size_t queued_of(const std::string &user) const;

 private:
  using Key = std::tuple<double, uint64_t, uint64_t>;  // order, arrival sequence, id
  struct Waiting {
    Key key;
    int max_threads = 0;
    int ranks = 0;
    std::string user{};
    int user_slots = 0;
    bool brief = false;
  };

  // kAdaptive's demand at `now`: calls that hold or wait for cores
  // (`arriving`: and one not yet queued), or the recent peak of that
  // number, which it updates. Brief calls are not part of it.
  int NoteDemand(double now, bool arriving);
  // The threads a call starting now gets (0: it may not start yet); a
  // brief one (never with ranks: BriefCall) gets 1 whenever a slot is free.
  int ThreadsFor(double now, bool arriving, int max_threads, int ranks, bool brief);
  // A call of `user` starts, holding `cores` (0: brief).
  void Hold(int cores, const std::string &user);
  // The user of a call with this quota holds all its slots.
  bool AtUserCap(const std::string &user, int user_slots) const;
  // Some queued call's user is under its quota (`brief_only`: and it is
  // brief): it goes before a newcomer.
  bool EligibleWaiting(bool brief_only) const;
  // Drops a call that left the queue from waiting_ and its user's count.
  void Forget(uint64_t id);

  SchedulerConfig config_;
  int running_ = 0;
  int threads_held_ = 0;
  int brief_running_ = 0;          // of running_, the brief calls (no cores held)
  std::size_t brief_waiting_ = 0;  // of queue_, the brief calls
  uint64_t arrivals_ = 0;
  std::set<Key> queue_;
  std::map<uint64_t, Waiting> waiting_;  // the queue by id
  // Per user: calls holding a slot, calls waiting (a user with none has no
  // row, so the maps stay as small as the users present).
  std::map<std::string, int> running_by_user_;
  std::map<std::string, std::size_t> queued_by_user_;
  int peak_demand_ = 0;
  double peak_at_ = 0;
};

// --- Admission after arrival (the `admission` setting) ---
//
// Under `admission = "arrival"` a call's executable gets the connection and
// reads the call's arguments before the call asks for a slot (CTL_WANT_SLOT
// with the arguments in memory), as the 1998 server forked on arrival and
// overlapped transfers with computation: a call's slow link then holds no
// slot and no core, and c calls over c links transfer at once. What bounds
// it is how many calls, and how many argument bytes, may be arriving or
// held (received, waiting for their slot) at once, server-wide and per
// client; beyond that a call waits before its hand-off, in arrival order,
// holding only its connection. Never refused for it.
enum class AdmissionOrder {
  kArrival,  // the arguments first, then the slot (the default)
  kStart,    // a slot first, then the arguments (the order before)
};
bool ParseAdmissionOrder(std::string_view text, AdmissionOrder *out);
const char *AdmissionOrderName(AdmissionOrder order);

// Whether a call is admitted after arrival. Not a two-phase call (its
// ticket goes out once the arguments are in, and its client leaves: a
// wait for the slot after that has no one to send heartbeats to), nor one
// whose launch holds cores itself (an MPI job's ranks, a Slurm step) or
// whose client is redirected to an executable elsewhere: those take their
// slot first, as before.
struct ArrivalFacts {
  AdmissionOrder order = AdmissionOrder::kArrival;
  bool two_phase = false;
  bool direct_launch = true;  // a local executable, started by ninfd itself
  bool redirected = false;
};
bool ArrivesFirst(const ArrivalFacts &facts);

// The bounds (0: none). A client is its user where users exist, else its
// address.
struct ArrivalBounds {
  std::size_t calls = 0;         // arrival_limit
  uint64_t bytes = 0;            // arrival_bytes
  std::size_t client_calls = 0;  // client_arrival_limit
  uint64_t client_bytes = 0;     // client_arrival_bytes
};

// The bounds from the settings: arrival_bytes 0 is a quarter of the
// machine's memory (`memory_bytes`: arguments held beside the computations'
// own memory and the kernel's socket buffers, and an even share of it is
// still 64 MiB each for 64 calls on a 16 GiB machine), client_arrival_bytes
// 0 a quarter of arrival_bytes (four clients at their bound fill the
// server's), client_arrival_limit 0 the server's arrival_limit.
ArrivalBounds ResolveArrivalBounds(int64_t limit, int64_t bytes, int64_t client_limit,
                                   int64_t client_bytes, uint64_t memory_bytes);

// Calls and bytes arriving or held, of the server or of one client.
struct ArrivalLoad {
  std::size_t calls = 0;
  uint64_t bytes = 0;
};

// Whether a call of `bytes` may begin to arrive beside `held`: under the
// call bound, and within the byte bound, except that a call alone (nothing
// held) always may, so that a call larger than the byte bound (but within
// max_call_bytes) is not refused: it waits until it is alone.
bool MayArrive(const ArrivalLoad &held, uint64_t bytes, std::size_t max_calls, uint64_t max_bytes);

// The argument bytes a call is charged before they come: its ARGS frame's
// length when ninfd can see the frame's header in the socket, else (TLS,
// or the header not yet in) an even share of the byte bound, the bound
// over the call bound.
uint64_t ChargedArrivalBytes(bool known, uint64_t frame_bytes, const ArrivalBounds &bounds);

// The bytes a handle's later call is charged: its executable's report
// (CTL_ARRIVING), which ninfd bounds and never trusts further: at most
// max_call_bytes (no call may bring more; the executable refuses such a
// frame) and never so much that the gate's sums could wrap.
uint64_t ReportedArrivalBytes(uint64_t reported, int64_t max_call_bytes);

// The calls allowed to arrive (held from the hand-off until they get their
// slot or end) and those waiting for that, in arrival order. Pure
// bookkeeping; the caller passes the bounds on each decision (so a reload
// applies at once). Not thread-safe.
class ArrivalGate {
 public:
  struct Call {
    uint64_t id = 0;
    std::string client{};
    uint64_t bytes = 0;
  };
  // A call asks to arrive: true if it may now (it is held), false if it
  // waits (Next hands it out later). It waits when it does not fit or when
  // a waiting call that may go would go before it.
  bool Offer(const Call &call, const ArrivalBounds &bounds);
  // The held call got its slot or ended (no-op for a call not held).
  void Done(uint64_t id);
  // A call that gave its slot back while it still holds its memory (its
  // result is being written: release_slot = "computed") counts again, room
  // or not: it is in memory already. Done() when it ends.
  void Rehold(const Call &call);
  // The first waiting call that fits now (it is held from here), if any:
  // a call whose own client is at its bound is passed over; the first one
  // that does not fit the server's bound stops the search (arrival order:
  // a large call is not overtaken for ever by small ones).
  std::optional<uint64_t> Next(const ArrivalBounds &bounds);
  // A waiting call left (its client went away). False if it was not waiting.
  bool Withdraw(uint64_t id);
  // Empties the waiting list, in order (shutdown).
  std::vector<uint64_t> TakeWaiting();

  ArrivalLoad held() const { return held_; }
  ArrivalLoad held_of(const std::string &client) const;
  ArrivalLoad waiting() const { return waiting_load_; }
  bool holds(uint64_t id) const { return holding_.count(id) != 0; }

 private:
  bool Fits(const Call &call, const ArrivalBounds &bounds, bool *client_blocked) const;
  void Hold(const Call &call);

  ArrivalLoad held_;
  ArrivalLoad waiting_load_;
  std::map<uint64_t, Call> holding_;
  std::map<std::string, ArrivalLoad> by_client_;  // held, per client present
  std::vector<Call> waiting_;                     // arrival order
};

}  // namespace ninf::server
