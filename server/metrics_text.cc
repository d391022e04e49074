#include "server/metrics_text.h"

#include <map>
#include <vector>

#include "daemon/prometheus_text.h"
#include "daemon/stat_table.h"
#include "server/stats_table.h"

namespace ninf::server {
namespace {

// Every served function from the start, at zero until its first call: a
// series that appears already counting hides its first increase from
// rate().
void FunctionFamilies(daemon::PrometheusText *out, const Gauges &g, const Counters &c) {
  std::map<std::string, FunctionStats> functions = c.functions;
  for (const std::string &name : g.served) functions.try_emplace(name);
  std::vector<daemon::StatInstance<FunctionStats>> instances;
  for (const auto &[name, f] : functions)
    instances.push_back({daemon::PrometheusText::Label("function", name), &f});
  daemon::WriteFamilies<FunctionStats>(out, FunctionStatRows(), instances);
}

// Per user (bounded: Counters::user_labels, then "other").
void UserFamilies(daemon::PrometheusText *out, const Gauges &g, const Counters &c) {
  std::vector<UserCallStats> calls(g.users.size());
  std::vector<UserStatsSource> sources;
  sources.reserve(g.users.size());
  for (std::size_t i = 0; i < g.users.size(); ++i) {
    if (auto it = c.users.find(g.users[i].name); it != c.users.end()) calls[i] = it->second;
    sources.push_back({g.users[i], calls[i]});
  }
  std::vector<daemon::StatInstance<UserStatsSource>> instances;
  for (std::size_t i = 0; i < sources.size(); ++i)
    instances.push_back({daemon::PrometheusText::Label("user", g.users[i].name), &sources[i]});
  daemon::WriteFamilies<UserStatsSource>(out, UserStatRows(), instances);
}

}  // namespace

std::string FormatPrometheus(const Gauges &g, const Counters &c) {
  daemon::PrometheusText out;
  const GlobalStatsSource global{g, c};
  const daemon::StatInstance<GlobalStatsSource> once[] = {{"", &global}};
  daemon::WriteFamilies<GlobalStatsSource>(&out, GlobalStatRows(), once);
  FunctionFamilies(&out, g, c);
  UserFamilies(&out, g, c);
  return out.Take();
}

}  // namespace ninf::server
