#include "server/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ninf::server {
namespace {

// Seconds with microsecond resolution and no exponent, so that every tool
// can parse the value.
std::string Seconds(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f", s);
  return buf;
}

void Line(std::string *out, const std::string &name, const std::string &value) {
  *out += name;
  *out += ':';
  *out += value;
  *out += '\n';
}

void Line(std::string *out, const std::string &name, uint64_t value) {
  Line(out, name, std::to_string(value));
}

}  // namespace

const char *CallOutcomeName(CallOutcome outcome) {
  switch (outcome) {
    case CallOutcome::kCompleted:
      return "completed";
    case CallOutcome::kFailed:
      return "failed";
    case CallOutcome::kCancelled:
      return "cancelled";
    case CallOutcome::kRejected:
      return "rejected";
  }
  return "unknown";
}

void Counters::RecordCall(const std::string &function, CallOutcome outcome, double seconds,
                          uint64_t in, uint64_t out) {
  bytes_in += in;
  bytes_out += out;
  switch (outcome) {
    case CallOutcome::kCompleted:
      ++completed;
      break;
    case CallOutcome::kFailed:
      ++failed;
      break;
    case CallOutcome::kCancelled:
      ++cancelled;
      break;
    case CallOutcome::kRejected:
      ++rejected;
      return;
  }
  FunctionStats &f = functions[function];
  ++f.calls;
  if (outcome == CallOutcome::kFailed) ++f.failed;
  if (outcome == CallOutcome::kCompleted) {
    ++f.completed;
    f.busy_seconds += seconds;
  }
}

void Counters::RecordSpeed(const std::string &function, double work, double compute_seconds) {
  if (!(work > 0) || !(compute_seconds > 1e-4) || !std::isfinite(work / compute_seconds)) return;
  const double speed = work / compute_seconds;
  double &smoothed = functions[function].flops_per_second;
  smoothed = smoothed == 0 ? speed : 0.7 * smoothed + 0.3 * speed;
}

void Counters::RecordStartup(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return;
  startup_seconds = startup_seconds == 0 ? seconds : 0.7 * startup_seconds + 0.3 * seconds;
}

void Histogram::Observe(double seconds) {
  std::size_t bucket = 0;
  while (bucket < std::size(kBounds) && seconds > kBounds[bucket]) ++bucket;
  ++counts[bucket];
  ++count;
  sum += seconds;
}

void Counters::RecordWait(const std::string &function, double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) seconds = 0;
  queue_seconds += seconds;
  FunctionStats &f = functions[function];
  f.wait_seconds += seconds;
  f.wait_histogram.Observe(seconds);
  ++f.admitted;
}

void Counters::RecordPhases(const std::string &function, double transfer_seconds,
                            double compute_seconds, int threads) {
  if (!(transfer_seconds >= 0) || !std::isfinite(transfer_seconds)) transfer_seconds = 0;
  if (!(compute_seconds >= 0) || !std::isfinite(compute_seconds)) compute_seconds = 0;
  FunctionStats &f = functions[function];
  f.transfer_seconds += transfer_seconds;
  f.compute_seconds += compute_seconds;
  f.transfer_histogram.Observe(transfer_seconds);
  f.compute_histogram.Observe(compute_seconds);
  busy_core_seconds += compute_seconds * std::max(1, threads);
}

void Counters::RecordUserCall(const std::string &label, CallOutcome outcome) {
  UserCallStats &u = users[label];
  switch (outcome) {
    case CallOutcome::kCompleted:
      ++u.completed;
      break;
    case CallOutcome::kFailed:
      ++u.failed;
      break;
    case CallOutcome::kCancelled:
      ++u.cancelled;
      break;
    case CallOutcome::kRejected:
      ++u.rejected;
      break;
  }
}

std::string FormatStats(const Gauges &g, const Counters &c) {
  std::string out;
  Line(&out, "version", g.version);
  Line(&out, "pid", static_cast<uint64_t>(g.pid));
  Line(&out, "uptime_seconds", static_cast<uint64_t>(g.uptime_seconds));
  Line(&out, "cores", static_cast<uint64_t>(g.cores));
  Line(&out, "slots", static_cast<uint64_t>(g.slots));
  Line(&out, "threads_per_job", static_cast<uint64_t>(g.threads_per_job));
  Line(&out, "thread_budget", g.thread_budget);
  Line(&out, "queue_order", g.queue_order);
  Line(&out, "queue_limit", g.queue_limit);
  Line(&out, "max_call_bytes", g.max_call_bytes);
  Line(&out, "functions", g.functions);
  Line(&out, "running", static_cast<uint64_t>(g.running));
  Line(&out, "queued", g.queued);
  Line(&out, "admission", g.admission);
  Line(&out, "arrival_limit", g.arrival_limit);
  Line(&out, "arrival_bytes", g.arrival_bytes_limit);
  Line(&out, "arrival_waiting", g.arrival_waiting);
  Line(&out, "arrival_waiting_bytes", g.arrival_waiting_bytes);
  Line(&out, "arrival_held", g.arrival_held);
  Line(&out, "arrival_held_bytes", g.arrival_held_bytes);
  Line(&out, "arriving", g.arriving);
  Line(&out, "held", g.held);
  Line(&out, "held_bytes", g.held_bytes);
  Line(&out, "threads_held", static_cast<uint64_t>(g.threads_held));
  Line(&out, "busy_core_seconds", Seconds(g.busy_core_seconds));
  Line(&out, "queue_seconds", Seconds(c.queue_seconds));
  Line(&out, "jobs", g.jobs);
  Line(&out, "connections", g.connections);
  Line(&out, "connections_accepted", c.connections_accepted);
  Line(&out, "completed", c.completed);
  Line(&out, "failed", c.failed);
  Line(&out, "cancelled", c.cancelled);
  Line(&out, "rejected", c.rejected);
  Line(&out, "protocol_errors", c.protocol_errors);
  Line(&out, "auth_failures", c.auth_failures);
  Line(&out, "denied", c.denied);
  Line(&out, "bytes_in", c.bytes_in);
  Line(&out, "bytes_out", c.bytes_out);
  Line(&out, "executables_started", c.executables_started);
  Line(&out, "warm_executables", g.warm_executables);
  Line(&out, "warm_idle", g.warm_idle);
  Line(&out, "warm_hits", c.warm_hits);
  Line(&out, "executables_reused", c.executables_reused);
  Line(&out, "warm_misses", c.warm_misses);
  Line(&out, "persistent_executables", g.persistent_executables);
  Line(&out, "kept_slots", g.kept_slots);
  Line(&out, "kept_slot_calls", c.kept_slot_calls);
  Line(&out, "store_entries", g.store_entries);
  Line(&out, "store_bytes", g.store_bytes);
  Line(&out, "store_cap", g.store_cap);
  Line(&out, "store_stored", g.store_stored);
  Line(&out, "store_refused", g.store_refused);
  Line(&out, "store_expired", g.store_expired);
  Line(&out, "store_released", g.store_released);
  Line(&out, "store_served_bytes", g.store_served_bytes);
  Line(&out, "store_descriptors", g.store_descriptors);
  char load[32];
  std::snprintf(load, sizeof load, "%.2f", g.load_average_1);
  Line(&out, "load_average_1", load);
  for (const auto &[name, f] : c.functions) {
    std::string prefix = "function." + name + ".";
    Line(&out, prefix + "calls", f.calls);
    Line(&out, prefix + "failed", f.failed);
    Line(&out, prefix + "mean_seconds",
         Seconds(f.completed ? f.busy_seconds / static_cast<double>(f.completed) : 0.0));
    Line(&out, prefix + "wait_seconds", Seconds(f.wait_seconds));
    Line(&out, prefix + "transfer_seconds", Seconds(f.transfer_seconds));
    Line(&out, prefix + "compute_seconds", Seconds(f.compute_seconds));
    Line(&out, prefix + "peak_rss_bytes", f.peak_rss_bytes);
  }
  for (const UserGauge &u : g.users) {
    UserCallStats calls;
    if (auto it = c.users.find(u.name); it != c.users.end()) calls = it->second;
    std::string prefix = "user." + u.name + ".";
    Line(&out, prefix + "calls", calls.completed + calls.failed + calls.cancelled);
    Line(&out, prefix + "completed", calls.completed);
    Line(&out, prefix + "failed", calls.failed);
    Line(&out, prefix + "rejected", calls.rejected);
    Line(&out, prefix + "denied", calls.denied);
    Line(&out, prefix + "running", static_cast<uint64_t>(u.running));
    Line(&out, prefix + "queued", u.queued);
    Line(&out, prefix + "store_bytes", u.store_bytes);
  }
  return out;
}

}  // namespace ninf::server
