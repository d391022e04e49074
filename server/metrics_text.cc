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

  out.Head("ninf_executables", "gauge", "Executable processes by state.");
  out.Sample("ninf_executables", P::Label("state", "live"), static_cast<double>(g.jobs));
  out.Sample("ninf_executables", P::Label("state", "persistent"),
             static_cast<double>(g.persistent_executables));
  out.Sample("ninf_executables", P::Label("state", "warm_idle"), static_cast<double>(g.warm_idle));
  out.Metric("ninf_executables_started_total", "counter", "Executables started, cold or warm.",
             static_cast<double>(c.executables_started));
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
