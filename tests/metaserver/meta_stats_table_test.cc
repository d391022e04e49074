// Unit tests of ninf-meta's statistics table (metaserver/meta_stats_table.h):
// its rows keep the table's rules, and the status lines and samples are
// written from them.
#include "metaserver/meta_stats_table.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "daemon/prometheus_text.h"

using namespace ninf::meta;

TEST_CASE("meta_stats_table_rows_keep_the_rules", "[meta_stats]") {
  using ninf::daemon::StatRowProblems;
  CHECK(StatRowProblems(MetaStatRows()).empty());
  CHECK(StatRowProblems(MetaServerStatRows()).empty());
  CHECK(StatRowProblems(MetaLinkStatRows()).empty());
  std::set<std::string> families;
  for (const ninf::daemon::FamilyDoc &family : MetaStatFamilies())
    CHECK(families.insert(family.name).second);  // no family in two tables
}

TEST_CASE("meta_stats_status_and_metrics_come_from_the_rows", "[meta_stats]") {
  MetaGauges g;
  g.version = "1.0";
  g.pid = 7;
  g.uptime_seconds = 2.66;
  g.policy = "load";
  MetaCounters c;
  c.placements = 5;
  c.placements_unserved = 2;
  c.registrations_refused = 1;
  c.reports_refused = 2;
  c.report_functions_refused = 4;
  c.outcomes_refused = 3;
  std::string status;
  ninf::daemon::WriteStatusLines(&status, MetaStatRows(), "", MetaStatsSource{g, c});
  CHECK(status.rfind("version:1.0\npid:7\nuptime_seconds:2.7\npolicy:load\n", 0) == 0);
  CHECK_THAT(status, Catch::Contains("\nplacements:5\nplacements_unserved:2\n"));
  ninf::daemon::PrometheusText out;
  const MetaStatsSource source{g, c};
  const ninf::daemon::StatInstance<MetaStatsSource> once[] = {{"", &source}};
  ninf::daemon::WriteFamilies<MetaStatsSource>(&out, MetaStatRows(), once);
  const std::string text = out.Take();
  // placements counts the placed alone (never less the unserved).
  CHECK_THAT(text, Catch::Contains("\nninf_meta_placements_total{result=\"placed\"} 5\n"));
  CHECK_THAT(text, Catch::Contains("\nninf_meta_placements_total{result=\"unserved\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("\nninf_meta_config_info{policy=\"load\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("\nninf_meta_refused_total 6\n"));  // report_functions apart
  CHECK_THAT(text,
             Catch::Contains("ninf_meta_refused_by_kind_total{kind=\"report_functions\"} 4\n"));
}
