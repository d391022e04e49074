// ninf-meta's one list of statistics: every counter and gauge declared once
// (its --status line, its Prometheus family, type, help, labels) in the rows
// of daemon/stat_table.h, as ninfd's are (server/stats_table.h). StatsText
// and MetricsText (meta_server.h) are written from these rows; the docs'
// table of ninf-meta's metrics is checked against them
// (scripts/check_metrics_docs.py).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "daemon/stat_table.h"
#include "metaserver/forecast.h"
#include "metaserver/server_table.h"

namespace ninf::meta {

// What ninf-meta counts as it serves (MetaServer::counters_).
struct MetaCounters {
  uint64_t registrations = 0;
  uint64_t reports = 0;
  uint64_t servers_expired = 0;
  uint64_t servers_closed = 0;
  uint64_t placements = 0;           // placed (a probe asked first or a plan's breakdown: neither)
  uint64_t placements_unserved = 0;  // no server serves the function
  uint64_t placements_denied = 0;    // the function's allow list leaves the user out
  uint64_t probe_requests = 0;       // placements answered with links to probe
  uint64_t probes = 0;               // probe results received
  uint64_t outcomes_ok = 0;
  uint64_t outcomes_failed = 0;
  uint64_t interface_conflicts = 0;
  uint64_t registrations_refused = 0;     // a figure out of range
  uint64_t reports_refused = 0;           // a figure out of range
  uint64_t report_functions_refused = 0;  // samples of functions not registered
  uint64_t outcomes_refused = 0;          // another client's ticket
  uint64_t protocol_errors = 0;
  uint64_t auth_failures = 0;
  uint64_t connections_accepted = 0;
};

// Its instantaneous values, read when a reply or a scrape is written.
struct MetaGauges {
  std::string version;
  int64_t pid = 0;
  double uptime_seconds = 0;
  std::string policy;
  uint64_t servers = 0;    // registered and within their lease
  uint64_t functions = 0;  // distinct functions they serve
  uint64_t links = 0;
  uint64_t links_evicted = 0;
  uint64_t connections = 0;
};

struct MetaStatsSource {
  const MetaGauges &gauges;
  const MetaCounters &counters;
};

// The global lines and families, in --status order.
std::span<const daemon::StatRowOf<MetaStatsSource>> MetaStatRows();
// Each registered server's (labels server, address, site; no status lines:
// `--servers` is a table of its own).
std::span<const daemon::StatRowOf<ServerEntry>> MetaServerStatRows();
// Each link's forecast (labels site, reporter, server).
std::span<const daemon::StatRowOf<LinkModel::Estimate>> MetaLinkStatRows();

// Every Prometheus family of ninf-meta's statistics, for the docs check.
std::vector<daemon::FamilyDoc> MetaStatFamilies();

}  // namespace ninf::meta
