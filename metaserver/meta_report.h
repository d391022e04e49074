// What ninf-meta shows of itself: the --status, --servers and --links texts
// and the Prometheus text of /metrics (docs/monitoring.md), each a pure
// function of the server table, the counters and the gauges, so that
// MetaServer only gathers them.
#pragma once

#include <cstddef>
#include <string>

#include "metaserver/meta_stats_table.h"
#include "metaserver/server_table.h"

namespace ninf::meta {

// At most this many links in the --links text and in /metrics, the most
// recently used: a flood of client sites cannot make either large
// (ninf_meta_links counts them all).
inline constexpr std::size_t kShownLinks = 256;

// `ninf-meta --status`: one line per row of the statistics table.
std::string StatusText(const MetaGauges &gauges, const MetaCounters &counters);
// `ninf-meta --servers`: a header and one line per registered server;
// `now` is the table's clock (seconds since ninf-meta started).
std::string ServersText(const ServerTable &table, double now);
// `ninf-meta --links`: a header and one line per link, most recently used
// first, kShownLinks of them and a line counting the rest.
std::string LinksText(const ServerTable &table, double now);
// /metrics: ninf-meta's families, then each server's, then each shown link's.
std::string MetricsText(const MetaGauges &gauges, const MetaCounters &counters,
                        const ServerTable &table);
// Distinct functions the registered servers serve (--status, /metrics).
std::size_t FunctionCount(const ServerTable &table);

}  // namespace ninf::meta
