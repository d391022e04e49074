// Daemon statistics and their text form, the FRAME_STATS_REPLY body.
//
// The reply is a list of stable `name:value` lines (like Redis INFO or
// memcached `stats`): tools and tests look values up by name, so names are
// never renamed, only added. Which fields are printed, under which names
// and in which form is the statistics table's (stats_table.h): a field here
// without a row there is neither a status line nor a metric.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ninf::server {

// How one call ended, as counted by the statistics.
enum class CallOutcome {
  kCompleted,  // the executable reported success
  kFailed,     // the routine reported an error, or the executable died or could not start
  kCancelled,  // the client went away before the result
  kRejected,   // never ran: queue full or shutting down
};

const char *CallOutcomeName(CallOutcome outcome);

// A latency histogram with fixed bucket bounds, in seconds: what a
// Prometheus histogram exports (cumulative there, per bucket here).
struct Histogram {
  static constexpr double kBounds[] = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60, 600};
  static constexpr std::size_t kBuckets = std::size(kBounds) + 1;  // the last is +Inf
  uint64_t counts[kBuckets] = {};
  uint64_t count = 0;
  double sum = 0;
  void Observe(double seconds);
};

struct FunctionStats {
  uint64_t calls = 0;  // every call that was admitted, whatever its outcome
  uint64_t failed = 0;
  uint64_t completed = 0;
  double busy_seconds = 0;  // sum of receive + compute + send of completed calls
  // CalcOrder / compute time of its calls, smoothed (0: no call with a
  // CalcOrder yet): the speed the metaserver predicts with.
  double flops_per_second = 0;
  // Where the time of its calls went: waiting for a slot (every admitted
  // call), moving arrays and in the routine (completed calls).
  double wait_seconds = 0;
  double transfer_seconds = 0;
  double compute_seconds = 0;
  // The compute time of its recent completed calls, a smoothed mean (each
  // call weighs kRecentWeight; -1: none yet): whether its calls are brief
  // (admission.h IsBrief) when they carry no prediction.
  double recent_compute_seconds = -1;
  uint64_t admitted = 0;  // calls that got a slot (wait_seconds is over these)
  // The same times call by call, for percentiles (metrics_text.h).
  Histogram wait_histogram, transfer_histogram, compute_histogram;
  // Its executable has no thread library (it said so at CALL_DONE): more
  // than one core would sit idle.
  bool single_threaded = false;
  // The largest resident peak one of its executables reached over one call
  // (CTL_CALL_DONE; stubs/runtime/peak_memory.h): the call's arrays plus
  // the process's own code, libraries and kept buffers.
  uint64_t peak_rss_bytes = 0;
};

// One user's calls, by how they ended (denied: refused by an allow list or
// because its key was revoked; counted apart from `rejected`).
struct UserCallStats {
  uint64_t completed = 0, failed = 0, cancelled = 0, rejected = 0, denied = 0;
};

struct Counters {
  uint64_t completed = 0;
  uint64_t failed = 0;
  uint64_t cancelled = 0;
  uint64_t rejected = 0;
  uint64_t bytes_in = 0;             // array and header bytes the executables received
  uint64_t bytes_out = 0;            // and sent
  uint64_t executables_started = 0;  // cold and warm
  uint64_t warm_hits = 0;            // calls handed to a warm executable
  uint64_t warm_misses = 0;          // calls that had to start their executable
  uint64_t executables_reused = 0;   // calls served by a process that served one before
  uint64_t kept_slot_calls = 0;      // a handle's calls begun on the slot it kept (slot_lease.h)
  uint64_t connections_accepted = 0;
  uint64_t protocol_errors = 0;
  uint64_t auth_failures = 0;   // connections closed for a missing or wrong proof
  uint64_t calls_received = 0;  // FRAME_CALLs for a served function (the metaserver's count)
  double startup_seconds = 0;   // an executable's cold start, smoothed (0: none measured yet)
  // Core-seconds of routines that have finished: compute time x the threads
  // the call was granted (server utilization = its growth / (time x cores)).
  double busy_core_seconds = 0;
  double queue_seconds = 0;  // time calls waited for a slot, all together
  std::map<std::string, FunctionStats> functions;
  // By user label (users.h UserLabel): at most user_metric_labels users
  // have one of their own, the rest count under "other".
  std::map<std::string, UserCallStats, std::less<>> users;
  std::set<std::string, std::less<>> user_labels;
  uint64_t denied = 0;  // calls refused by an allow list or a revoked user

  // Counts one ended call of `label`'s user.
  void RecordUserCall(const std::string &label, CallOutcome outcome);

  // Counts one ended call. `seconds` is the time the executable spent on it
  // (receive + compute + send); it enters the mean for completed calls only.
  // Rejected calls are not counted per function: they never reached it.
  void RecordCall(const std::string &function, CallOutcome outcome, double seconds,
                  uint64_t bytes_in, uint64_t bytes_out);
  // A completed call's speed: CalcOrder `work` over `compute_seconds`, into
  // the function's smoothed flops_per_second (calls without a CalcOrder, or
  // too short to time, say nothing).
  void RecordSpeed(const std::string &function, double work, double compute_seconds);
  // A cold start's measured seconds (negative: none) into startup_seconds.
  void RecordStartup(double seconds);
  // A call got its slot after waiting `seconds`.
  void RecordWait(const std::string &function, double seconds);
  // A call's routine ran `compute_seconds` on `threads` threads, and its
  // arrays moved for `transfer_seconds` (receive + send).
  void RecordPhases(const std::string &function, double transfer_seconds, double compute_seconds,
                    int threads);
};

// A user's instantaneous share, for --status and the metrics.
struct UserGauge {
  std::string name{};  // its label
  int running = 0;
  uint64_t queued = 0;
  uint64_t store_bytes = 0;
};

// Instantaneous values, read when the reply is built.
struct Gauges {
  std::string version;
  int64_t pid = 0;
  double uptime_seconds = 0;
  int cores = 0;
  int slots = 0;
  int threads_per_job = 0;  // a lone call's threads
  std::string thread_budget;
  std::string queue_order;
  int threads_held = 0;   // by the running calls
  int brief_running = 0;  // running calls holding a slot and no core (admission.h)
  // Counters::busy_core_seconds and the part of the running routines so far.
  double busy_core_seconds = 0;
  int running = 0;      // calls holding a slot
  uint64_t queued = 0;  // calls waiting for a slot (held ones, arguments in, included)
  // Admission after arrival: calls waiting for room under the arrival
  // bounds (before their hand-off) and their bytes; calls with room (from
  // the hand-off to their slot) and the bytes charged to them; of those,
  // the executables reading arguments, and those holding them (received
  // bytes) waiting for a slot.
  uint64_t arrival_waiting = 0, arrival_waiting_bytes = 0;
  uint64_t arrival_held = 0, arrival_held_bytes = 0;
  uint64_t arriving = 0, held = 0, held_bytes = 0;
  std::string admission;
  uint64_t arrival_limit = 0, arrival_bytes_limit = 0;
  uint64_t jobs = 0;                    // live executables (idle persistent ones included)
  uint64_t persistent_executables = 0;  // live persistent executables, bound to a client
  uint64_t kept_slots = 0;              // of them, those keeping their slot between calls
  uint64_t warm_idle = 0;               // started executables waiting for a call
  uint64_t warm_executables = 0;        // the setting
  uint64_t connections = 0;
  uint64_t queue_limit = 0;
  uint64_t max_call_bytes = 0;
  uint64_t functions = 0;           // served by the registry
  std::vector<std::string> served;  // their names (metrics export every one from the start)
  double load_average_1 = 0;
  // The store of kept data (data_store.h).
  uint64_t store_entries = 0, store_bytes = 0, store_cap = 0, store_stored = 0, store_refused = 0,
           store_expired = 0, store_released = 0;
  uint64_t store_served_bytes = 0;  // sent by COLLECT and FETCH (not in bytes_out)
  uint64_t store_descriptors = 0;   // entries held as a memfd (the rest are in memory)
  // Per user: the configured users and those with a label, by name.
  std::vector<UserGauge> users;
};

// The reply text, written from the statistics table's rows: global lines
// first, then function.NAME.* lines sorted by name, then user.NAME.* lines
// for each user of `gauges.users` (only `only_user`'s when it is given: ""
// shows none). Every line ends with '\n'.
std::string FormatStats(const Gauges &gauges, const Counters &counters,
                        const std::string *only_user = nullptr);

}  // namespace ninf::server
