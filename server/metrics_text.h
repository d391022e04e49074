// ninfd's statistics in the Prometheus text exposition format (version
// 0.0.4), what the metrics endpoint (metrics_endpoint.h) serves: the
// families of the statistics table (stats_table.h), each with HELP and TYPE
// once, then the global samples, each served function's (every one from the
// start, at zero) and each labelled user's. The process_* metrics are the
// endpoint's (daemon/process_metrics.h). docs/monitoring.md has the list
// (checked against the table) and the queries. A pure function:
// unit-tested, among others against FormatStats (every status line has its
// metric).
#pragma once

#include <string>

#include "server/stats.h"

namespace ninf::server {

std::string FormatPrometheus(const Gauges &gauges, const Counters &counters);

}  // namespace ninf::server
