// Prints every Prometheus family of a daemon's statistics table (ninfd's
// server/stats_table.h, ninf-meta's metaserver/meta_stats_table.h), one a line:
// name, TYPE word, label keys joined by commas, separated by tabs.
// scripts/check_metrics_docs.py compares docs/monitoring.md's metrics
// tables with it. Usage: stat_families_dump ninfd|ninf-meta
#include <cstdio>
#include <string>

#include "metaserver/meta_stats_table.h"
#include "server/stats_table.h"

int main(int argc, char **argv) {
  const std::string daemon = argc == 2 ? argv[1] : "";
  if (daemon != "ninfd" && daemon != "ninf-meta") {
    std::fprintf(stderr, "usage: stat_families_dump ninfd|ninf-meta\n");
    return 2;
  }
  const auto families =
      daemon == "ninfd" ? ninf::server::StatFamilies() : ninf::meta::MetaStatFamilies();
  for (const ninf::daemon::FamilyDoc &family : families) {
    std::string labels;
    for (const std::string &label : family.labels) labels += (labels.empty() ? "" : ",") + label;
    std::printf("%s\t%s\t%s\n", family.name.c_str(), family.type.c_str(), labels.c_str());
  }
  return 0;
}
