// ninf-meta's statistics in the Prometheus text format (docs/monitoring.md):
// its counters, each server's load and placements, and each link's
// forecast latency and bandwidth with the forecaster's error. Per-link
// series only for the kMetricsLinks most recently used links (a flood of
// client sites cannot make a scrape large); ninf_meta_links counts them all.
#include <vector>

#include "daemon/prometheus_text.h"
#include "daemon/stat_table.h"
#include "metaserver/meta_server.h"
#include "metaserver/meta_stats_table.h"

namespace ninf::meta {
namespace {
constexpr std::size_t kMetricsLinks = 256;
}  // namespace

std::string MetaServer::MetricsText() const {
  using P = daemon::PrometheusText;
  P out;
  const MetaGauges gauges = CurrentGauges();
  const MetaStatsSource global{gauges, counters_};
  const daemon::StatInstance<MetaStatsSource> once[] = {{"", &global}};
  daemon::WriteFamilies<MetaStatsSource>(&out, MetaStatRows(), once);

  // Per server: where placements went, and the load it reported.
  std::vector<daemon::StatInstance<ServerEntry>> servers;
  for (const auto &[id, e] : table_.servers())
    servers.push_back({P::Label("server", id) + "," + P::Label("address", e.reg.address) + "," +
                           P::Label("site", e.reg.site),
                       &e});
  daemon::WriteFamilies<ServerEntry>(&out, MetaServerStatRows(), servers);

  // Per link (client site, reporter, server), the most recently used: the
  // forecasts placement uses.
  std::vector<LinkModel::Estimate> estimates;
  std::vector<std::string> labels;
  for (const LinkKey &key : table_.links_by_use()) {
    if (estimates.size() == kMetricsLinks) break;
    const auto &[site, reporter, server] = key;
    estimates.push_back(table_.LinkAt(key).Current());
    labels.push_back(P::Label("site", site) + "," + P::Label("reporter", reporter) + "," +
                     P::Label("server", server));
  }
  std::vector<daemon::StatInstance<LinkModel::Estimate>> links;
  for (std::size_t i = 0; i < estimates.size(); ++i) links.push_back({labels[i], &estimates[i]});
  daemon::WriteFamilies<LinkModel::Estimate>(&out, MetaLinkStatRows(), links);
  return out.Take();
}

}  // namespace ninf::meta
