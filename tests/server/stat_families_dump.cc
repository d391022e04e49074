// Prints every Prometheus family of ninfd's statistics table
// (server/stats_table.h), one a line: name, TYPE word, label keys joined by
// commas, separated by tabs. scripts/check_metrics_docs.py compares
// docs/monitoring.md's metrics table with it.
#include <cstdio>

#include "server/stats_table.h"

int main() {
  for (const ninf::daemon::FamilyDoc &family : ninf::server::StatFamilies()) {
    std::string labels;
    for (const std::string &label : family.labels) labels += (labels.empty() ? "" : ",") + label;
    std::printf("%s\t%s\t%s\n", family.name.c_str(), family.type.c_str(), labels.c_str());
  }
  return 0;
}
