#include "server/metrics_text.h"

#include <map>

#include "daemon/prometheus_text.h"

namespace ninf::server {
namespace {

using P = daemon::PrometheusText;

void HistogramSamples(P *out, const std::string &labels, const Histogram &h) {
  uint64_t cumulative = 0;
  for (std::size_t b = 0; b < Histogram::kBuckets; ++b) {
    cumulative += h.counts[b];
    const std::string le =
        b < std::size(Histogram::kBounds) ? P::Number(Histogram::kBounds[b]) : "+Inf";
    out->Sample("ninf_call_seconds_bucket", labels + "," + P::Label("le", le),
                static_cast<double>(cumulative));
  }
  out->Sample("ninf_call_seconds_sum", labels, h.sum);
  out->Sample("ninf_call_seconds_count", labels, static_cast<double>(h.count));
}

// --status lines that had no metric before issue 31, one metric each (the
// name says which line: ninf_<line>, _total for a counter, _bytes for a
// byte count); the settings in words as labels of one info metric.
void StatusMetrics(P *out, const Gauges &g, const Counters &c) {
  out->Head("ninf_config_info", "gauge",
            "Scheduling settings in force as labels (always 1): admission, queue_order, "
            "thread_budget.");
  out->Sample("ninf_config_info",
              P::Label("admission", g.admission) + "," + P::Label("queue_order", g.queue_order) +
                  "," + P::Label("thread_budget", g.thread_budget),
              1);
  auto n = [](uint64_t v) { return static_cast<double>(v); };
  out->Metric("ninf_threads_per_job", "gauge", "Threads a lone call is granted.",
              g.threads_per_job);
  out->Metric("ninf_queue_limit", "gauge", "Calls that may wait for a slot (queue_limit).",
              n(g.queue_limit));
  out->Metric("ninf_max_call_bytes", "gauge", "Largest call accepted, in bytes (max_call_bytes).",
              n(g.max_call_bytes));
  out->Metric("ninf_functions", "gauge", "Functions the registry serves.", n(g.functions));
  out->Metric("ninf_arrival_limit", "gauge", "Calls that may hold room under the arrival bounds.",
              n(g.arrival_limit));
  out->Metric("ninf_arrival_bytes_limit", "gauge",
              "Argument bytes that may be charged under the arrival bounds.",
              n(g.arrival_bytes_limit));
  out->Metric("ninf_arrival_waiting_bytes", "gauge",
              "Argument bytes of the calls waiting for room under the arrival bounds.",
              n(g.arrival_waiting_bytes));
  out->Metric("ninf_arguments_arriving", "gauge", "Executables reading a call's arguments now.",
              n(g.arriving));
  out->Metric("ninf_queue_seconds_total", "counter", "Seconds calls waited for a slot, summed.",
              c.queue_seconds);
  out->Metric("ninf_connections_accepted_total", "counter", "Client connections accepted.",
              n(c.connections_accepted));
  out->Metric("ninf_protocol_errors_total", "counter",
              "Connections closed for a malformed or unexpected frame.", n(c.protocol_errors));
  out->Metric("ninf_auth_failures_total", "counter",
              "Connections closed for a missing or wrong proof of a key.", n(c.auth_failures));
  out->Metric("ninf_calls_denied_total", "counter",
              "Calls refused by an allow list or for a revoked user.", n(c.denied));
  out->Metric("ninf_warm_executables", "gauge", "Executables kept started per function (setting).",
              n(g.warm_executables));
  out->Metric("ninf_executables_reused_total", "counter",
              "Calls served by a process that had served one before.", n(c.executables_reused));
  out->Metric("ninf_store_entries", "gauge", "Entries of kept data.", n(g.store_entries));
  out->Metric("ninf_store_bytes", "gauge", "Bytes of kept data.", n(g.store_bytes));
  out->Metric("ninf_store_cap_bytes", "gauge", "The store's bound, in bytes.", n(g.store_cap));
  out->Metric("ninf_store_descriptors", "gauge", "Entries of kept data held as a memfd.",
              n(g.store_descriptors));
  out->Metric("ninf_store_stored_total", "counter", "Entries of kept data stored.",
              n(g.store_stored));
  out->Metric("ninf_store_refused_total", "counter", "Entries refused at the store's bounds.",
              n(g.store_refused));
  out->Metric("ninf_store_expired_total", "counter", "Entries dropped at their expiry.",
              n(g.store_expired));
  out->Metric("ninf_store_released_total", "counter", "Entries released by their owner.",
              n(g.store_released));
  out->Metric("ninf_store_served_bytes_total", "counter",
              "Bytes of kept data sent by COLLECT and FETCH.", n(g.store_served_bytes));
  out->Metric("ninf_load_average_1", "gauge", "The host's 1-minute load average.",
              g.load_average_1);
}

}  // namespace

std::string FormatPrometheus(const Gauges &g, const Counters &c) {
  P out;
  out.Head("ninf_build_info", "gauge", "The ninfd version (always 1).");
  out.Sample("ninf_build_info", P::Label("version", g.version), 1);
  out.Metric("ninf_uptime_seconds", "gauge", "Seconds since ninfd started.", g.uptime_seconds);
  out.Metric("ninf_cores", "gauge", "Cores ninfd schedules calls on.", g.cores);
  out.Metric("ninf_slots", "gauge", "Job slots: calls that may run at once.", g.slots);
  out.Metric("ninf_slots_busy", "gauge", "Calls holding a slot now.", g.running);
  out.Metric("ninf_threads_held", "gauge", "Threads granted to the running calls.", g.threads_held);
  out.Metric("ninf_queue_length", "gauge", "Calls waiting for a slot.",
             static_cast<double>(g.queued));
  out.Metric("ninf_arrival_calls", "gauge",
             "Calls with room under the arrival bounds and no slot yet (admission = arrival).",
             static_cast<double>(g.arrival_held));
  out.Metric("ninf_arrival_bytes", "gauge", "Argument bytes charged to those calls.",
             static_cast<double>(g.arrival_held_bytes));
  out.Metric("ninf_arrival_waiting", "gauge",
             "Calls waiting before their hand-off for room under the arrival bounds.",
             static_cast<double>(g.arrival_waiting));
  out.Metric("ninf_arguments_held", "gauge",
             "Calls whose arguments are in memory, waiting for a slot.",
             static_cast<double>(g.held));
  out.Metric("ninf_arguments_held_bytes", "gauge", "The bytes of those arguments.",
             static_cast<double>(g.held_bytes));
  out.Metric("ninf_connections", "gauge", "Open client connections.",
             static_cast<double>(g.connections));
  out.Metric("ninf_busy_core_seconds_total", "counter",
             "Core-seconds spent in routines (utilization = rate / ninf_cores).",
             g.busy_core_seconds);

  // The rest of `ninfd --status`'s global lines (stats.cc FormatStats),
  // so that a Prometheus alert can watch what an administrator reads there:
  // refused peers, the kept-data store, the limits in force.
  StatusMetrics(&out, g, c);

  out.Head("ninf_executables", "gauge", "Executable processes by state.");
  out.Sample("ninf_executables", P::Label("state", "live"), static_cast<double>(g.jobs));
  out.Sample("ninf_executables", P::Label("state", "persistent"),
             static_cast<double>(g.persistent_executables));
  out.Sample("ninf_executables", P::Label("state", "warm_idle"), static_cast<double>(g.warm_idle));
  out.Metric("ninf_executables_started_total", "counter", "Executables started, cold or warm.",
             static_cast<double>(c.executables_started));
  out.Metric("ninf_kept_slots", "gauge",
             "Function handles keeping their slot between calls (keep_handle_slots).",
             static_cast<double>(g.kept_slots));
  out.Metric("ninf_kept_slot_calls_total", "counter",
             "Function handle calls begun on the slot the handle kept, without asking ninfd.",
             static_cast<double>(c.kept_slot_calls));
  out.Metric("ninf_warm_hits_total", "counter", "Calls handed to a waiting executable.",
             static_cast<double>(c.warm_hits));
  out.Metric("ninf_warm_misses_total", "counter", "Calls that had to start their executable.",
             static_cast<double>(c.warm_misses));

  out.Head("ninf_bytes_total", "counter", "Bytes the executables received and sent.");
  out.Sample("ninf_bytes_total", P::Label("direction", "in"), static_cast<double>(c.bytes_in));
  out.Sample("ninf_bytes_total", P::Label("direction", "out"), static_cast<double>(c.bytes_out));

  out.Head("ninf_calls_ended_total", "counter", "Calls by how they ended.");
  const std::pair<const char *, uint64_t> ended[] = {{"completed", c.completed},
                                                     {"failed", c.failed},
                                                     {"cancelled", c.cancelled},
                                                     {"rejected", c.rejected}};
  for (const auto &[outcome, n] : ended)
    out.Sample("ninf_calls_ended_total", P::Label("outcome", outcome), static_cast<double>(n));

  // Every served function from the start, at zero until its first call: a
  // series that appears already counting hides its first increase from
  // rate().
  std::map<std::string, FunctionStats> functions = c.functions;
  for (const std::string &name : g.served) functions.try_emplace(name);
  out.Head("ninf_calls_total", "counter", "Calls of each function that completed or failed.");
  for (const auto &[name, f] : functions) {
    const std::string fn = P::Label("function", name);
    out.Sample("ninf_calls_total", fn + "," + P::Label("outcome", "completed"),
               static_cast<double>(f.completed));
    out.Sample("ninf_calls_total", fn + "," + P::Label("outcome", "failed"),
               static_cast<double>(f.failed));
  }
  out.Head("ninf_call_seconds", "histogram",
           "Where calls' time went: waiting for a slot, moving arrays, in the routine.");
  for (const auto &[name, f] : functions) {
    const std::string fn = P::Label("function", name);
    HistogramSamples(&out, fn + "," + P::Label("phase", "wait"), f.wait_histogram);
    HistogramSamples(&out, fn + "," + P::Label("phase", "transfer"), f.transfer_histogram);
    HistogramSamples(&out, fn + "," + P::Label("phase", "compute"), f.compute_histogram);
  }
  out.Head("ninf_executable_peak_rss_bytes", "gauge",
           "The largest resident memory one executable of the function reached over one call.");
  for (const auto &[name, f] : functions)
    out.Sample("ninf_executable_peak_rss_bytes", P::Label("function", name),
               static_cast<double>(f.peak_rss_bytes));
  // Per user (bounded: Counters::user_labels, then "other").
  out.Head("ninf_user_calls_total", "counter", "Calls of each user by how they ended.");
  for (const UserGauge &u : g.users) {
    UserCallStats calls;
    if (auto it = c.users.find(u.name); it != c.users.end()) calls = it->second;
    const std::string user = P::Label("user", u.name);
    const std::pair<const char *, uint64_t> by[] = {{"completed", calls.completed},
                                                    {"failed", calls.failed},
                                                    {"cancelled", calls.cancelled},
                                                    {"rejected", calls.rejected},
                                                    {"denied", calls.denied}};
    for (const auto &[outcome, n] : by)
      out.Sample("ninf_user_calls_total", user + "," + P::Label("outcome", outcome),
                 static_cast<double>(n));
  }
  out.Head("ninf_user_slots_busy", "gauge", "Slots each user's calls hold now.");
  for (const UserGauge &u : g.users)
    out.Sample("ninf_user_slots_busy", P::Label("user", u.name), u.running);
  out.Head("ninf_user_queue_length", "gauge", "Calls of each user waiting for a slot.");
  for (const UserGauge &u : g.users)
    out.Sample("ninf_user_queue_length", P::Label("user", u.name), static_cast<double>(u.queued));
  out.Head("ninf_user_store_bytes", "gauge", "Bytes of kept data each user holds.");
  for (const UserGauge &u : g.users)
    out.Sample("ninf_user_store_bytes", P::Label("user", u.name),
               static_cast<double>(u.store_bytes));
  return out.Take();
}

}  // namespace ninf::server
