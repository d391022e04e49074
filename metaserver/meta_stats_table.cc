#include "metaserver/meta_stats_table.h"

namespace ninf::meta {
namespace {

using daemon::MetricType;
using daemon::StatFormat;
using daemon::StatValue;

// Readers of one member, so that a row names its field.
template <auto M>
StatValue MetaStatOfGauges(const MetaStatsSource &s) {
  return s.gauges.*M;
}
template <auto M>
StatValue MetaStatOfCounters(const MetaStatsSource &s) {
  return s.counters.*M;
}
template <auto M>
StatValue MetaStatOfLoad(const ServerEntry &e) {
  return e.Load().*M;
}
template <auto M>
StatValue MetaStatOfLastReport(const ServerEntry &e) {
  return static_cast<uint64_t>(e.last.*M);
}
template <auto M>
StatValue MetaStatOfLink(const LinkModel::Estimate &e) {
  return static_cast<double>(e.*M);
}

// `placements` counts the placed requests alone (the unserved and the
// denied have counters of their own): subtracting the unserved from it, as
// this once did, undercounted, and wrapped around below zero.
StatValue MetaPlacementsPlaced(const MetaStatsSource &s) { return s.counters.placements; }

// What ninf_meta_refused_total has always summed (report_functions apart).
StatValue MetaRefusedSum(const MetaStatsSource &s) {
  return s.counters.registrations_refused + s.counters.reports_refused +
         s.counters.outcomes_refused;
}

StatValue MetaServerPlacements(const ServerEntry &e) { return e.placements; }

constexpr auto kMetaCounter = MetricType::kCounter;
constexpr auto kMetaGauge = MetricType::kGauge;
constexpr auto kMetaInteger = StatFormat::kInteger;

using MetaGlobalRow = daemon::StatRowOf<MetaStatsSource>;

// status line, metric family, its label, type, status format, help, value.
constexpr MetaGlobalRow kMetaStatRows[] = {
    {"version", "ninf_meta_build_info", "version", kMetaGauge, StatFormat::kText,
     "The ninf-meta version (always 1).", &MetaStatOfGauges<&MetaGauges::version>},
    // The target's identity; process_start_time_seconds tells restarts.
    {"pid", nullptr, nullptr, kMetaGauge, kMetaInteger, nullptr,
     &MetaStatOfGauges<&MetaGauges::pid>},
    {"uptime_seconds", "ninf_meta_uptime_seconds", nullptr, kMetaGauge, StatFormat::kTenths,
     "Seconds since ninf-meta started.", &MetaStatOfGauges<&MetaGauges::uptime_seconds>},
    {"policy", "ninf_meta_config_info", "policy", kMetaGauge, StatFormat::kText,
     "The placement policy in force (always 1).", &MetaStatOfGauges<&MetaGauges::policy>},
    {"servers", "ninf_meta_servers", nullptr, kMetaGauge, kMetaInteger,
     "Servers registered and within their lease.", &MetaStatOfGauges<&MetaGauges::servers>},
    {"functions", "ninf_meta_functions", nullptr, kMetaGauge, kMetaInteger,
     "Distinct functions the registered servers serve.", &MetaStatOfGauges<&MetaGauges::functions>},
    {"links", "ninf_meta_links", nullptr, kMetaGauge, kMetaInteger,
     "Links (client site, reporter, server) known.", &MetaStatOfGauges<&MetaGauges::links>},
    {"links_evicted", "ninf_meta_links_evicted_total", nullptr, kMetaCounter, kMetaInteger,
     "Links evicted, least recently used first, to keep the table bounded.",
     &MetaStatOfGauges<&MetaGauges::links_evicted>},
    {"connections", "ninf_meta_connections", nullptr, kMetaGauge, kMetaInteger,
     "Open connections, servers' and clients'.", &MetaStatOfGauges<&MetaGauges::connections>},
    {"connections_accepted", "ninf_meta_connections_accepted_total", nullptr, kMetaCounter,
     kMetaInteger, "Connections accepted.",
     &MetaStatOfCounters<&MetaCounters::connections_accepted>},
    {"registrations", "ninf_meta_registrations_total", nullptr, kMetaCounter, kMetaInteger,
     "Server registrations.", &MetaStatOfCounters<&MetaCounters::registrations>},
    {"reports", "ninf_meta_reports_total", nullptr, kMetaCounter, kMetaInteger,
     "Load reports received.", &MetaStatOfCounters<&MetaCounters::reports>},
    {"servers_expired", "ninf_meta_servers_expired_total", nullptr, kMetaCounter, kMetaInteger,
     "Servers that missed their lease.", &MetaStatOfCounters<&MetaCounters::servers_expired>},
    {"servers_closed", "ninf_meta_servers_closed_total", nullptr, kMetaCounter, kMetaInteger,
     "Servers that left by closing their connection.",
     &MetaStatOfCounters<&MetaCounters::servers_closed>},
    {"placements", nullptr, nullptr, kMetaCounter, kMetaInteger, nullptr,
     &MetaStatOfCounters<&MetaCounters::placements>},
    {nullptr, "ninf_meta_placements_total", "result=placed", kMetaCounter, kMetaInteger,
     "Placement requests: placed, for a function no server serves, or refused to the user "
     "(its allow list).",
     &MetaPlacementsPlaced},
    {"placements_unserved", "ninf_meta_placements_total", "result=unserved", kMetaCounter,
     kMetaInteger, nullptr, &MetaStatOfCounters<&MetaCounters::placements_unserved>},
    {"placements_denied", "ninf_meta_placements_total", "result=denied", kMetaCounter, kMetaInteger,
     nullptr, &MetaStatOfCounters<&MetaCounters::placements_denied>},
    {"probe_requests", "ninf_meta_probe_requests_total", nullptr, kMetaCounter, kMetaInteger,
     "Placements answered with links to probe first.",
     &MetaStatOfCounters<&MetaCounters::probe_requests>},
    {"probes", "ninf_meta_probes_total", nullptr, kMetaCounter, kMetaInteger,
     "Link probe results received.", &MetaStatOfCounters<&MetaCounters::probes>},
    {"outcomes_ok", "ninf_meta_outcomes_total", "outcome=ok", kMetaCounter, kMetaInteger,
     "Call outcomes clients reported.", &MetaStatOfCounters<&MetaCounters::outcomes_ok>},
    {"outcomes_failed", "ninf_meta_outcomes_total", "outcome=failed", kMetaCounter, kMetaInteger,
     nullptr, &MetaStatOfCounters<&MetaCounters::outcomes_failed>},
    {"interface_conflicts", "ninf_meta_interface_conflicts_total", nullptr, kMetaCounter,
     kMetaInteger, "Registrations of a function with another interface than a registered server's.",
     &MetaStatOfCounters<&MetaCounters::interface_conflicts>},
    {"registrations_refused", "ninf_meta_refused_by_kind_total", "kind=registration", kMetaCounter,
     kMetaInteger,
     "Requests refused, by kind (ninf_meta_refused_total is their sum, less report_functions).",
     &MetaStatOfCounters<&MetaCounters::registrations_refused>},
    {"reports_refused", "ninf_meta_refused_by_kind_total", "kind=report", kMetaCounter,
     kMetaInteger, nullptr, &MetaStatOfCounters<&MetaCounters::reports_refused>},
    {"report_functions_refused", "ninf_meta_refused_by_kind_total", "kind=report_functions",
     kMetaCounter, kMetaInteger, nullptr,
     &MetaStatOfCounters<&MetaCounters::report_functions_refused>},
    {"outcomes_refused", "ninf_meta_refused_by_kind_total", "kind=outcome", kMetaCounter,
     kMetaInteger, nullptr, &MetaStatOfCounters<&MetaCounters::outcomes_refused>},
    {"protocol_errors", "ninf_meta_protocol_errors_total", nullptr, kMetaCounter, kMetaInteger,
     "Connections closed for a malformed or unexpected frame.",
     &MetaStatOfCounters<&MetaCounters::protocol_errors>},
    {"auth_failures", "ninf_meta_auth_failures_total", nullptr, kMetaCounter, kMetaInteger,
     "Connections closed for a missing or wrong proof of a key.",
     &MetaStatOfCounters<&MetaCounters::auth_failures>},
    {nullptr, "ninf_meta_refused_total", nullptr, kMetaCounter, kMetaInteger,
     "Registrations, load reports and outcomes refused (a figure out of range, another "
     "client's ticket).",
     &MetaRefusedSum},
};

constexpr daemon::StatRowOf<ServerEntry> kMetaServerStatRows[] = {
    {nullptr, "ninf_meta_server_placements_total", nullptr, kMetaCounter, kMetaInteger,
     "Calls placed on each server first.", &MetaServerPlacements},
    {nullptr, "ninf_meta_server_running", nullptr, kMetaGauge, kMetaInteger,
     "Calls running on each server, as reported.", &MetaStatOfLoad<&ServerLoad::running>},
    {nullptr, "ninf_meta_server_queued", nullptr, kMetaGauge, kMetaInteger,
     "Calls queued on each server, as reported.", &MetaStatOfLoad<&ServerLoad::queued>},
    {nullptr, "ninf_meta_server_arriving", nullptr, kMetaGauge, kMetaInteger,
     "Calls arriving or holding their arguments without a slot on each server, as reported "
     "(admission after arrival).",
     &MetaStatOfLastReport<&LoadSample::arriving>},
    {nullptr, "ninf_meta_server_arriving_bytes", nullptr, kMetaGauge, kMetaInteger,
     "The argument bytes charged to those calls, as reported.",
     &MetaStatOfLastReport<&LoadSample::arriving_bytes>},
    {nullptr, "ninf_meta_server_arrival_waiting", nullptr, kMetaGauge, kMetaInteger,
     "Calls waiting before their hand-off for room under the arrival bounds, as reported.",
     &MetaStatOfLastReport<&LoadSample::arrival_waiting>},
    {nullptr, "ninf_meta_server_slots", nullptr, kMetaGauge, kMetaInteger,
     "Job slots of each server.", &MetaStatOfLoad<&ServerLoad::slots>},
};

using Estimate = LinkModel::Estimate;

constexpr daemon::StatRowOf<Estimate> kMetaLinkStatRows[] = {
    {nullptr, "ninf_meta_link_bandwidth_bytes_per_second", nullptr, kMetaGauge, kMetaInteger,
     "Forecast bandwidth of each link.", &MetaStatOfLink<&Estimate::bandwidth_bytes_per_second>},
    {nullptr, "ninf_meta_link_bandwidth_error_bytes_per_second", nullptr, kMetaGauge, kMetaInteger,
     "Recent error of the chosen bandwidth forecaster.",
     &MetaStatOfLink<&Estimate::bandwidth_error>},
    {nullptr, "ninf_meta_link_latency_seconds", nullptr, kMetaGauge, kMetaInteger,
     "Forecast latency of each link.", &MetaStatOfLink<&Estimate::latency_seconds>},
    {nullptr, "ninf_meta_link_latency_error_seconds", nullptr, kMetaGauge, kMetaInteger,
     "Recent error of the chosen latency forecaster.", &MetaStatOfLink<&Estimate::latency_error>},
    {nullptr, "ninf_meta_link_samples", nullptr, kMetaGauge, kMetaInteger,
     "Samples behind each link's forecast.", &MetaStatOfLink<&Estimate::samples>},
};

}  // namespace

std::span<const daemon::StatRowOf<MetaStatsSource>> MetaStatRows() { return kMetaStatRows; }

std::span<const daemon::StatRowOf<ServerEntry>> MetaServerStatRows() { return kMetaServerStatRows; }

std::span<const daemon::StatRowOf<LinkModel::Estimate>> MetaLinkStatRows() {
  return kMetaLinkStatRows;
}

std::vector<daemon::FamilyDoc> MetaStatFamilies() {
  std::vector<daemon::FamilyDoc> out;
  daemon::DescribeFamilies(&out, MetaStatRows(), nullptr);
  daemon::DescribeFamilies(&out, MetaServerStatRows(), "server,address,site");
  daemon::DescribeFamilies(&out, MetaLinkStatRows(), "site,reporter,server");
  return out;
}

}  // namespace ninf::meta
