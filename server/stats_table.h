// ninfd's one list of statistics: every counter and gauge declared once
// (its --status line, its Prometheus family, type, help, labels) in the rows
// of daemon/stat_table.h. FormatStats (stats.h) and FormatPrometheus
// (metrics_text.h) are derived from these rows, and so is the dump that
// scripts/check_metrics_docs.py checks docs/monitoring.md's table against.
// Who may read a row follows from its columns (daemon/stat_table.h): the
// status line goes to a key holder, the metric to the metrics endpoint.
#pragma once

#include <span>
#include <vector>

#include "daemon/stat_table.h"
#include "server/stats.h"

namespace ninf::server {

// What the global rows read.
struct GlobalStatsSource {
  const Gauges &gauges;
  const Counters &counters;
};

// What a user's rows read: its calls by outcome and its share now.
struct UserStatsSource {
  const UserGauge &gauge;
  const UserCallStats &calls;
};

// The global lines and families, in --status order.
std::span<const daemon::StatRowOf<GlobalStatsSource>> GlobalStatRows();
// A function's (status: function.NAME.*; samples labelled function="NAME").
std::span<const daemon::StatRowOf<FunctionStats>> FunctionStatRows();
// A user's (status: user.NAME.*; samples labelled user="NAME").
std::span<const daemon::StatRowOf<UserStatsSource>> UserStatRows();

// Every Prometheus family of ninfd's statistics, for the docs check.
std::vector<daemon::FamilyDoc> StatFamilies();

}  // namespace ninf::server
