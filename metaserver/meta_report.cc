// ninf-meta's texts: --status from its statistics table, --servers and
// --links as columns, /metrics in the Prometheus text format
// (docs/monitoring.md): its counters, each server's load and placements,
// and each shown link's forecast latency and bandwidth with the
// forecaster's error.
#include "metaserver/meta_report.h"

#include <cstdio>
#include <set>
#include <string_view>
#include <vector>

#include "daemon/prometheus_text.h"
#include "daemon/stat_table.h"

namespace ninf::meta {

std::string StatusText(const MetaGauges &gauges, const MetaCounters &counters) {
  std::string out;
  daemon::WriteStatusLines(&out, MetaStatRows(), "", MetaStatsSource{gauges, counters});
  return out;
}

std::string ServersText(const ServerTable &table, double now) {
  std::string out =
      "server address site slots running queued reserved placed work_s load_avg flops/s "
      "startup_s heard_s_ago functions\n";
  for (const auto &[id, e] : table.servers()) {
    ServerLoad load = e.Load();
    char buf[512];
    std::snprintf(buf, sizeof buf, "%s %s %s %d %d %d %d %llu %.3f %.2f %.3g %.4f %.1f %zu\n",
                  id.c_str(), e.reg.address.c_str(), e.reg.site.empty() ? "-" : e.reg.site.c_str(),
                  load.slots, load.running, load.queued, load.reserved_calls,
                  static_cast<unsigned long long>(e.placements), load.work_seconds,
                  e.last.load_average, e.reg.flops_per_second, e.reg.startup_seconds,
                  now - e.heard_at, e.reg.functions.size());
    out += buf;
  }
  return out;
}

std::string LinksText(const ServerTable &table, double now) {
  std::string out =
      "site server latency_ms latency_err_ms latency_method bandwidth_MBps bandwidth_err_MBps "
      "bandwidth_method samples sample_s_ago rejected reporter\n";
  std::size_t shown = 0;
  for (const LinkKey &key : table.links_by_use()) {
    if (shown++ == kShownLinks) {
      out += "# " + std::to_string(table.link_count() - kShownLinks) +
             " less recently used links not shown\n";
      break;
    }
    const auto &[site, reporter, server] = key;
    LinkModel::Estimate e = table.LinkAt(key).Current();
    char buf[768];
    std::snprintf(buf, sizeof buf, "%s %s %.3f %.3f %.*s %.2f %.2f %.*s %zu %.1f %llu %s\n",
                  site.c_str(), server.c_str(), e.latency_seconds * 1e3, e.latency_error * 1e3,
                  static_cast<int>(e.latency_method.size()), e.latency_method.data(),
                  e.bandwidth_bytes_per_second / 1e6, e.bandwidth_error / 1e6,
                  static_cast<int>(e.bandwidth_method.size()), e.bandwidth_method.data(), e.samples,
                  e.last_sample_at < 0 ? -1.0 : now - e.last_sample_at,
                  static_cast<unsigned long long>(e.rejected), reporter.c_str());
    out += buf;
  }
  return out;
}

std::string MetricsText(const MetaGauges &gauges, const MetaCounters &counters,
                        const ServerTable &table) {
  using P = daemon::PrometheusText;
  P out;
  const MetaStatsSource global{gauges, counters};
  const daemon::StatInstance<MetaStatsSource> once[] = {{"", &global}};
  daemon::WriteFamilies<MetaStatsSource>(&out, MetaStatRows(), once);

  // Per server: where placements went, and the load it reported.
  std::vector<daemon::StatInstance<ServerEntry>> servers;
  for (const auto &[id, e] : table.servers())
    servers.push_back({P::Label("server", id) + "," + P::Label("address", e.reg.address) + "," +
                           P::Label("site", e.reg.site),
                       &e});
  daemon::WriteFamilies<ServerEntry>(&out, MetaServerStatRows(), servers);

  // Per link (client site, reporter, server), the most recently used: the
  // forecasts placement uses.
  std::vector<LinkModel::Estimate> estimates;
  std::vector<std::string> labels;
  for (const LinkKey &key : table.links_by_use()) {
    if (estimates.size() == kShownLinks) break;
    const auto &[site, reporter, server] = key;
    estimates.push_back(table.LinkAt(key).Current());
    labels.push_back(P::Label("site", site) + "," + P::Label("reporter", reporter) + "," +
                     P::Label("server", server));
  }
  std::vector<daemon::StatInstance<LinkModel::Estimate>> links;
  for (std::size_t i = 0; i < estimates.size(); ++i) links.push_back({labels[i], &estimates[i]});
  daemon::WriteFamilies<LinkModel::Estimate>(&out, MetaLinkStatRows(), links);
  return out.Take();
}

std::size_t FunctionCount(const ServerTable &table) {
  std::set<std::string_view> functions;
  for (const auto &[id, e] : table.servers())
    functions.insert(e.reg.functions.begin(), e.reg.functions.end());
  return functions.size();
}

}  // namespace ninf::meta
