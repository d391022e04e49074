// ninf-meta's statistics in the Prometheus text format (docs/monitoring.md):
// its counters, each server's load and placements, and each link's
// forecast latency and bandwidth with the forecaster's error. Per-link
// series only for the kMetricsLinks most recently used links (a flood of
// client sites cannot make a scrape large); ninf_meta_links counts them all.
#include "daemon/prometheus_text.h"
#include "metaserver/meta_server.h"

namespace ninf::meta {
namespace {
constexpr std::size_t kMetricsLinks = 256;
}  // namespace

std::string MetaServer::MetricsText() const {
  using P = daemon::PrometheusText;
  P out;
  out.Head("ninf_meta_build_info", "gauge", "The ninf-meta version (always 1).");
  out.Sample("ninf_meta_build_info", P::Label("version", NINF_VERSION), 1);
  out.Metric("ninf_meta_uptime_seconds", "gauge", "Seconds since ninf-meta started.", Now());
  out.Metric("ninf_meta_servers", "gauge", "Servers registered and within their lease.",
             static_cast<double>(table_.size()));
  out.Metric("ninf_meta_registrations_total", "counter", "Server registrations.",
             static_cast<double>(counters_.registrations));
  out.Metric("ninf_meta_servers_expired_total", "counter", "Servers that missed their lease.",
             static_cast<double>(counters_.servers_expired));
  out.Head("ninf_meta_placements_total", "counter",
           "Placement requests: placed, or for a function no server serves.");
  out.Sample("ninf_meta_placements_total", P::Label("result", "placed"),
             static_cast<double>(counters_.placements - counters_.placements_unserved));
  out.Sample("ninf_meta_placements_total", P::Label("result", "unserved"),
             static_cast<double>(counters_.placements_unserved));
  out.Head("ninf_meta_outcomes_total", "counter", "Call outcomes clients reported.");
  out.Sample("ninf_meta_outcomes_total", P::Label("outcome", "ok"),
             static_cast<double>(counters_.outcomes_ok));
  out.Sample("ninf_meta_outcomes_total", P::Label("outcome", "failed"),
             static_cast<double>(counters_.outcomes_failed));
  out.Metric("ninf_meta_probes_total", "counter", "Link probe results received.",
             static_cast<double>(counters_.probes));

  // The rest of `ninf-meta --status` (StatsText), so that an alert can
  // watch what an administrator reads there: refused peers, churn, load.
  out.Head("ninf_meta_config_info", "gauge", "The placement policy in force (always 1).");
  out.Sample("ninf_meta_config_info", P::Label("policy", std::string(PolicyName(policy_))), 1);
  out.Metric("ninf_meta_functions", "gauge", "Distinct functions the registered servers serve.",
             static_cast<double>(FunctionCount()));
  out.Metric("ninf_meta_connections", "gauge", "Open connections, servers' and clients'.",
             static_cast<double>(connections_.size()));
  out.Metric("ninf_meta_connections_accepted_total", "counter", "Connections accepted.",
             static_cast<double>(counters_.connections_accepted));
  out.Metric("ninf_meta_reports_total", "counter", "Load reports received.",
             static_cast<double>(counters_.reports));
  out.Metric("ninf_meta_servers_closed_total", "counter",
             "Servers that left by closing their connection.",
             static_cast<double>(counters_.servers_closed));
  out.Metric("ninf_meta_probe_requests_total", "counter",
             "Placements answered with links to probe first.",
             static_cast<double>(counters_.probe_requests));
  out.Metric("ninf_meta_interface_conflicts_total", "counter",
             "Registrations of a function with another interface than a registered server's.",
             static_cast<double>(counters_.interface_conflicts));
  out.Head("ninf_meta_refused_by_kind_total", "counter",
           "Requests refused, by kind (ninf_meta_refused_total is their sum, less "
           "report_functions).");
  const std::pair<const char *, uint64_t> refused[] = {
      {"registration", counters_.registrations_refused},
      {"report", counters_.reports_refused},
      {"report_functions", counters_.report_functions_refused},
      {"outcome", counters_.outcomes_refused}};
  for (const auto &[kind, n] : refused)
    out.Sample("ninf_meta_refused_by_kind_total", P::Label("kind", kind), static_cast<double>(n));
  out.Metric("ninf_meta_protocol_errors_total", "counter",
             "Connections closed for a malformed or unexpected frame.",
             static_cast<double>(counters_.protocol_errors));
  out.Metric("ninf_meta_auth_failures_total", "counter",
             "Connections closed for a missing or wrong proof of a key.",
             static_cast<double>(counters_.auth_failures));

  // Per server: where placements went, and the load it reported.
  auto server_labels = [](const std::string &id, const ServerEntry &e) {
    return P::Label("server", id) + "," + P::Label("address", e.reg.address) + "," +
           P::Label("site", e.reg.site);
  };
  out.Head("ninf_meta_server_placements_total", "counter", "Calls placed on each server first.");
  for (const auto &[id, e] : table_.servers())
    out.Sample("ninf_meta_server_placements_total", server_labels(id, e),
               static_cast<double>(e.placements));
  out.Head("ninf_meta_server_running", "gauge", "Calls running on each server, as reported.");
  for (const auto &[id, e] : table_.servers())
    out.Sample("ninf_meta_server_running", server_labels(id, e), e.Load().running);
  out.Head("ninf_meta_server_queued", "gauge", "Calls queued on each server, as reported.");
  for (const auto &[id, e] : table_.servers())
    out.Sample("ninf_meta_server_queued", server_labels(id, e), e.Load().queued);
  out.Head("ninf_meta_server_arriving", "gauge",
           "Calls arriving or holding their arguments without a slot on each server, as "
           "reported (admission after arrival).");
  for (const auto &[id, e] : table_.servers())
    out.Sample("ninf_meta_server_arriving", server_labels(id, e), e.last.arriving);
  out.Head("ninf_meta_server_arriving_bytes", "gauge",
           "The argument bytes charged to those calls, as reported.");
  for (const auto &[id, e] : table_.servers())
    out.Sample("ninf_meta_server_arriving_bytes", server_labels(id, e),
               static_cast<double>(e.last.arriving_bytes));
  out.Head("ninf_meta_server_arrival_waiting", "gauge",
           "Calls waiting before their hand-off for room under the arrival bounds, as reported.");
  for (const auto &[id, e] : table_.servers())
    out.Sample("ninf_meta_server_arrival_waiting", server_labels(id, e), e.last.arrival_waiting);
  out.Head("ninf_meta_server_slots", "gauge", "Job slots of each server.");
  for (const auto &[id, e] : table_.servers())
    out.Sample("ninf_meta_server_slots", server_labels(id, e), e.Load().slots);

  out.Metric("ninf_meta_links", "gauge", "Links (client site, reporter, server) known.",
             static_cast<double>(table_.link_count()));
  out.Metric("ninf_meta_links_evicted_total", "counter",
             "Links evicted, least recently used first, to keep the table bounded.",
             static_cast<double>(table_.links_evicted()));
  out.Metric("ninf_meta_refused_total", "counter",
             "Registrations, load reports and outcomes refused (a figure out of range, "
             "another client's ticket).",
             static_cast<double>(counters_.registrations_refused + counters_.reports_refused +
                                 counters_.outcomes_refused));

  // Per link (client site, reporter, server), the most recently used: the
  // forecasts placement uses.
  struct Family {
    const char *name, *help;
    double (*value)(const LinkModel::Estimate &);
  };
  const Family families[] = {
      {"ninf_meta_link_bandwidth_bytes_per_second", "Forecast bandwidth of each link.",
       [](const LinkModel::Estimate &e) { return e.bandwidth_bytes_per_second; }},
      {"ninf_meta_link_bandwidth_error_bytes_per_second",
       "Recent error of the chosen bandwidth forecaster.",
       [](const LinkModel::Estimate &e) { return e.bandwidth_error; }},
      {"ninf_meta_link_latency_seconds", "Forecast latency of each link.",
       [](const LinkModel::Estimate &e) { return e.latency_seconds; }},
      {"ninf_meta_link_latency_error_seconds", "Recent error of the chosen latency forecaster.",
       [](const LinkModel::Estimate &e) { return e.latency_error; }},
      {"ninf_meta_link_samples", "Samples behind each link's forecast.",
       [](const LinkModel::Estimate &e) { return static_cast<double>(e.samples); }},
  };
  for (const Family &f : families) {
    out.Head(f.name, "gauge", f.help);
    std::size_t shown = 0;
    for (const LinkKey &key : table_.links_by_use()) {
      if (shown++ == kMetricsLinks) break;
      const auto &[site, reporter, server] = key;
      out.Sample(f.name,
                 P::Label("site", site) + "," + P::Label("reporter", reporter) + "," +
                     P::Label("server", server),
                 f.value(table_.LinkAt(key).Current()));
    }
  }
  return out.Take();
}

}  // namespace ninf::meta
