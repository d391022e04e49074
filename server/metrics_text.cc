#include "metrics_text.h"

#include <charconv>
#include <cmath>
#include <map>

namespace ninf::server {
namespace {

// A label value with \, " and newline escaped, as the format requires.
std::string Escaped(const std::string &value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string Number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // The shortest text that reads back as the same double: "0.005", not
  // "0.0050000000000000001" (bucket bounds must match across scrapes).
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("NaN");
}

void Head(std::string *out, const char *name, const char *type, const char *help) {
  *out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void Sample(std::string *out, const std::string &name, const std::string &labels, double value) {
  *out += name + (labels.empty() ? "" : "{" + labels + "}") + " " + Number(value) + "\n";
}

void Metric(std::string *out, const char *name, const char *type, const char *help, double value) {
  Head(out, name, type, help);
  Sample(out, name, "", value);
}

void HistogramSamples(std::string *out, const std::string &labels, const Histogram &h) {
  uint64_t cumulative = 0;
  for (std::size_t b = 0; b < Histogram::kBuckets; ++b) {
    cumulative += h.counts[b];
    const std::string le =
        b < std::size(Histogram::kBounds) ? Number(Histogram::kBounds[b]) : std::string("+Inf");
    Sample(out, "ninf_call_seconds_bucket", labels + ",le=\"" + le + "\"",
           static_cast<double>(cumulative));
  }
  Sample(out, "ninf_call_seconds_sum", labels, h.sum);
  Sample(out, "ninf_call_seconds_count", labels, static_cast<double>(h.count));
}

}  // namespace

std::string FormatPrometheus(const Gauges &g, const Counters &c) {
  std::string out;
  Head(&out, "ninf_build_info", "gauge", "The ninfd version (always 1).");
  Sample(&out, "ninf_build_info", "version=\"" + Escaped(g.version) + "\"", 1);
  Metric(&out, "ninf_uptime_seconds", "gauge", "Seconds since ninfd started.", g.uptime_seconds);
  Metric(&out, "ninf_cores", "gauge", "Cores ninfd schedules calls on.", g.cores);
  Metric(&out, "ninf_slots", "gauge", "Job slots: calls that may run at once.", g.slots);
  Metric(&out, "ninf_slots_busy", "gauge", "Calls holding a slot now.", g.running);
  Metric(&out, "ninf_threads_held", "gauge", "Threads granted to the running calls.",
         g.threads_held);
  Metric(&out, "ninf_queue_length", "gauge", "Calls waiting for a slot.",
         static_cast<double>(g.queued));
  Metric(&out, "ninf_connections", "gauge", "Open client connections.",
         static_cast<double>(g.connections));
  Metric(&out, "ninf_busy_core_seconds_total", "counter",
         "Core-seconds spent in routines (utilization = rate / ninf_cores).", g.busy_core_seconds);

  Head(&out, "ninf_executables", "gauge", "Executable processes by state.");
  Sample(&out, "ninf_executables", "state=\"live\"", static_cast<double>(g.jobs));
  Sample(&out, "ninf_executables", "state=\"persistent\"",
         static_cast<double>(g.persistent_executables));
  Sample(&out, "ninf_executables", "state=\"warm_idle\"", static_cast<double>(g.warm_idle));
  Metric(&out, "ninf_executables_started_total", "counter", "Executables started, cold or warm.",
         static_cast<double>(c.executables_started));
  Metric(&out, "ninf_warm_hits_total", "counter", "Calls handed to a waiting executable.",
         static_cast<double>(c.warm_hits));
  Metric(&out, "ninf_warm_misses_total", "counter", "Calls that had to start their executable.",
         static_cast<double>(c.warm_misses));

  Head(&out, "ninf_bytes_total", "counter", "Bytes the executables received and sent.");
  Sample(&out, "ninf_bytes_total", "direction=\"in\"", static_cast<double>(c.bytes_in));
  Sample(&out, "ninf_bytes_total", "direction=\"out\"", static_cast<double>(c.bytes_out));

  Head(&out, "ninf_calls_ended_total", "counter", "Calls by how they ended.");
  Sample(&out, "ninf_calls_ended_total", "outcome=\"completed\"", static_cast<double>(c.completed));
  Sample(&out, "ninf_calls_ended_total", "outcome=\"failed\"", static_cast<double>(c.failed));
  Sample(&out, "ninf_calls_ended_total", "outcome=\"cancelled\"", static_cast<double>(c.cancelled));
  Sample(&out, "ninf_calls_ended_total", "outcome=\"rejected\"", static_cast<double>(c.rejected));

  // Every served function from the start, at zero until its first call: a
  // series that appears already counting hides its first increase from
  // rate().
  std::map<std::string, FunctionStats> functions = c.functions;
  for (const std::string &name : g.served) functions.try_emplace(name);
  Head(&out, "ninf_calls_total", "counter", "Calls of each function that completed or failed.");
  for (const auto &[name, f] : functions) {
    const std::string fn = "function=\"" + Escaped(name) + "\"";
    Sample(&out, "ninf_calls_total", fn + ",outcome=\"completed\"",
           static_cast<double>(f.completed));
    Sample(&out, "ninf_calls_total", fn + ",outcome=\"failed\"", static_cast<double>(f.failed));
  }
  Head(&out, "ninf_call_seconds", "histogram",
       "Where calls' time went: waiting for a slot, moving arrays, in the routine.");
  for (const auto &[name, f] : functions) {
    const std::string fn = "function=\"" + Escaped(name) + "\"";
    HistogramSamples(&out, fn + ",phase=\"wait\"", f.wait_histogram);
    HistogramSamples(&out, fn + ",phase=\"transfer\"", f.transfer_histogram);
    HistogramSamples(&out, fn + ",phase=\"compute\"", f.compute_histogram);
  }
  return out;
}

}  // namespace ninf::server
