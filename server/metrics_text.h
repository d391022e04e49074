// ninfd's statistics in the Prometheus text exposition format (version
// 0.0.4), what the metrics endpoint (metrics_endpoint.h) serves. The same
// Counters and Gauges as `ninfd --status`, named the Prometheus way:
//
//   ninf_calls_total{function, outcome}           completed, failed per function
//   ninf_calls_ended_total{outcome}                every outcome, rejected included
//   ninf_call_seconds_bucket{function, phase, le}  wait, transfer, compute histograms
//   ninf_bytes_total{direction}                    in, out (executables' array bytes)
//   ninf_busy_core_seconds_total                   utilization = rate / ninf_cores
//   ninf_slots, ninf_slots_busy, ninf_queue_length, ninf_cores, ninf_connections
//   ninf_executables{state}                        live, persistent, warm_idle
//   ninf_executables_started_total, ninf_warm_hits_total, ninf_warm_misses_total
//   ninf_uptime_seconds, ninf_build_info{version}
//   the rest of --status's global lines, one metric each: ninf_auth_failures_total,
//   ninf_protocol_errors_total, ninf_connections_accepted_total, ninf_store_*,
//   ninf_load_average_1, the limits in force, ninf_config_info{admission, ...}
//
// The process_* metrics are the endpoint's (daemon/process_metrics.h).
// docs/monitoring.md has the list and the queries. A pure function:
// unit-tested, among others against FormatStats (every status line has its
// metric).
#pragma once

#include <string>

#include "server/stats.h"

namespace ninf::server {

std::string FormatPrometheus(const Gauges &gauges, const Counters &counters);

}  // namespace ninf::server
