#include "server/stats.h"

#include <algorithm>
#include <cmath>

#include "server/stats_table.h"

namespace ninf::server {

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
  // A fifth per call: one long call among brief ones makes the next ten or
  // so count as not brief (they hold cores again) before the mean is back.
  constexpr double kRecentWeight = 0.2;
  f.recent_compute_seconds =
      f.recent_compute_seconds < 0
          ? compute_seconds
          : (1 - kRecentWeight) * f.recent_compute_seconds + kRecentWeight * compute_seconds;
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

std::string FormatStats(const Gauges &g, const Counters &c, const std::string *only_user) {
  std::string out;
  daemon::WriteStatusLines(&out, GlobalStatRows(), "", GlobalStatsSource{g, c});
  for (const auto &[name, f] : c.functions)
    daemon::WriteStatusLines(&out, FunctionStatRows(), "function." + name + ".", f);
  for (const UserGauge &u : g.users) {
    if (only_user && u.name != *only_user) continue;
    UserCallStats calls;
    if (auto it = c.users.find(u.name); it != c.users.end()) calls = it->second;
    daemon::WriteStatusLines(&out, UserStatRows(), "user." + u.name + ".",
                             UserStatsSource{u, calls});
  }
  return out;
}

}  // namespace ninf::server
