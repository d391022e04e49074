// The machinery behind a daemon's one list of statistics (ninfd's
// server/stats_table.h): each counter or gauge is a row declared once, and
// the `--status` lines, the Prometheus text of /metrics and the rows the
// docs' metrics table is checked against (scripts/check_metrics_docs.py)
// are all derived from the rows.
//
// Who may read a row follows from where it appears, as it did before the
// table: a row with a `status` name is a `name:value` line of the
// FRAME_STATS reply, which only a connection that passed the daemon's key
// handshake gets (the frame is kAuthenticated); a row with a `metric` name
// is a sample on the metrics endpoint, which answers whoever reaches its
// address (docs/monitoring.md: keep it on the monitoring's network).
//
// Rows of one table are read for one Source (ninfd: the gauges and the
// counters; one function's stats; one user's). Rows that share a `metric`
// are one family: the first of them carries its help, each carries a
// `label` ("key=value") that tells its sample from the others'. A row whose
// value is text is a label of its family's one sample (an info metric:
// ninf_build_info{version="..."} 1).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "daemon/prometheus_text.h"

namespace ninf::daemon {

enum class MetricType { kCounter, kGauge, kHistogram };

// "counter", "gauge", "histogram": the TYPE line's word.
const char *MetricTypeName(MetricType type);

// How a --status line writes its value (the forms scripts already parse).
enum class StatFormat {
  kInteger,     // decimal, a fraction truncated ("12" for 12.7 s)
  kMicros,      // six decimals ("2.500000"): seconds to the microsecond
  kHundredths,  // two decimals ("0.50"): a load average
  kTenths,      // one decimal ("12.7")
  kText,        // as it is
};

// A histogram's buckets (per bucket, not cumulative), as a row reads them.
struct HistogramView {
  std::span<const double> bounds;    // upper bounds; one bucket more, +Inf
  std::span<const uint64_t> counts;  // bounds.size() + 1
  uint64_t count = 0;
  double sum = 0;
};

using StatValue = std::variant<int64_t, uint64_t, double, std::string, HistogramView>;

template <class Source>
struct StatRowOf {
  const char *status;  // the --status line (after the table's prefix); nullptr: none
  const char *metric;  // the Prometheus family; nullptr: none
  const char *label;   // "key=value" of its sample in the family; a text row: the key; or nullptr
  MetricType type;
  StatFormat format;  // of the status line
  const char *help;   // the family's HELP, on the family's first row (nullptr on the others)
  StatValue (*value)(const Source &);
};

// One Source of a table's rows and the labels that tell it from the others
// ("" for a table read once; function="dgesv" for one function's rows).
template <class Source>
struct StatInstance {
  std::string labels;
  const Source *source;
};

// One family as the docs' table lists it: name, TYPE word, label keys in
// the order of its samples (a histogram's `le` left out).
struct FamilyDoc {
  std::string name;
  std::string type;
  std::vector<std::string> labels;
};

// The value of a --status line.
std::string FormatStatValue(const StatValue &value, StatFormat format);

// The key of a row's "key=value" label.
std::string_view LabelKey(const char *label);

// The sample(s) of a number or histogram row for one instance.
void WriteStatSample(PrometheusText *out, const char *metric, const std::string &labels,
                     const StatValue &value);

// Joins label texts with commas, skipping empty ones.
std::string JoinLabels(const std::string &a, const std::string &b);

// `prefix` + name:value for each row with a status name, in row order.
template <class Source>
void WriteStatusLines(std::string *out, std::span<const StatRowOf<Source>> rows,
                      const std::string &prefix, const Source &source) {
  for (const StatRowOf<Source> &row : rows) {
    if (row.status == nullptr) continue;
    *out += prefix;
    *out += row.status;
    *out += ':';
    *out += FormatStatValue(row.value(source), row.format);
    *out += '\n';
  }
}

namespace stat_table_detail {

// Whether rows[i] is the first of its family.
template <class Row>
bool OpensFamily(std::span<const Row> rows, std::size_t i) {
  if (rows[i].metric == nullptr) return false;
  for (std::size_t j = 0; j < i; ++j)
    if (rows[j].metric != nullptr && std::string_view(rows[j].metric) == rows[i].metric)
      return false;
  return true;
}

// The samples of the family rows[first] opens, for one instance: number
// rows one sample each, text rows one labels-only sample (labels sorted by
// key, the order they had before the table).
template <class Source>
void WriteFamilyOf(PrometheusText *out, std::span<const StatRowOf<Source>> rows, std::size_t first,
                   const StatInstance<Source> &instance) {
  const std::string_view family = rows[first].metric;
  std::vector<std::pair<std::string, std::string>> info;
  for (std::size_t j = first; j < rows.size(); ++j) {
    const StatRowOf<Source> &row = rows[j];
    if (row.metric == nullptr || family != row.metric) continue;
    StatValue value = row.value(*instance.source);
    if (auto *text = std::get_if<std::string>(&value)) {
      info.emplace_back(row.label, *text);
      continue;
    }
    const std::string own = row.label == nullptr ? "" : std::string(row.label);
    const std::size_t eq = own.find('=');
    const std::string label =
        eq == std::string::npos
            ? own
            : PrometheusText::Label(own.substr(0, eq).c_str(), own.substr(eq + 1));
    WriteStatSample(out, row.metric, JoinLabels(instance.labels, label), value);
  }
  if (info.empty()) return;
  std::sort(info.begin(), info.end());
  std::string labels = instance.labels;
  for (const auto &[key, text] : info)
    labels = JoinLabels(labels, PrometheusText::Label(key.c_str(), text));
  out->Sample(std::string(family), labels, 1);
}

}  // namespace stat_table_detail

// Every family of `rows` in the order of its first row: HELP and TYPE once,
// then its samples for each instance in turn.
template <class Source>
void WriteFamilies(PrometheusText *out, std::span<const StatRowOf<Source>> rows,
                   std::span<const StatInstance<Source>> instances) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!stat_table_detail::OpensFamily(rows, i)) continue;
    out->Head(rows[i].metric, MetricTypeName(rows[i].type), rows[i].help);
    for (const StatInstance<Source> &instance : instances)
      stat_table_detail::WriteFamilyOf(out, rows, i, instance);
  }
}

// The families of `rows` as the docs list them; `instance_labels` (or
// nullptr) are the labels every sample of the table carries, joined by
// commas ("function"; "server,address,site").
template <class Source>
void DescribeFamilies(std::vector<FamilyDoc> *out, std::span<const StatRowOf<Source>> rows,
                      const char *instance_labels) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!stat_table_detail::OpensFamily(rows, i)) continue;
    FamilyDoc doc{rows[i].metric, MetricTypeName(rows[i].type), {}};
    for (std::string_view rest = instance_labels == nullptr ? "" : instance_labels;
         !rest.empty();) {
      const std::size_t comma = std::min(rest.find(','), rest.size());
      doc.labels.emplace_back(rest.substr(0, comma));
      rest.remove_prefix(std::min(comma + 1, rest.size()));
    }
    for (std::size_t j = i; j < rows.size(); ++j) {
      if (rows[j].metric == nullptr || doc.name != rows[j].metric || rows[j].label == nullptr)
        continue;
      std::string key(LabelKey(rows[j].label));
      if (std::find(doc.labels.begin(), doc.labels.end(), key) == doc.labels.end())
        doc.labels.push_back(std::move(key));
    }
    out->push_back(std::move(doc));
  }
}

// What breaks a table's rules, one sentence each (empty: none): a row shown
// nowhere, a status name twice, a family whose rows disagree on its type,
// whose help is not on its first row alone, or whose samples share labels.
// The daemons' unit tests assert it is empty.
template <class Source>
std::vector<std::string> StatRowProblems(std::span<const StatRowOf<Source>> rows) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const StatRowOf<Source> &row = rows[i];
    const std::string name = row.status ? row.status : row.metric ? row.metric : "(unnamed)";
    if (row.status == nullptr && row.metric == nullptr) out.push_back(name + ": shown nowhere");
    if (row.metric == nullptr && row.help != nullptr) out.push_back(name + ": help, no metric");
    if (row.metric != nullptr && (row.help != nullptr) != stat_table_detail::OpensFamily(rows, i))
      out.push_back(name + ": help must be on the family's first row alone");
    for (std::size_t j = 0; j < i; ++j) {
      const StatRowOf<Source> &other = rows[j];
      if (row.status && other.status && std::string_view(row.status) == other.status)
        out.push_back(name + ": status line twice");
      if (!row.metric || !other.metric || std::string_view(row.metric) != other.metric) continue;
      if (row.type != other.type) out.push_back(name + ": two types in " + row.metric);
      const std::string_view a = row.label ? row.label : "", b = other.label ? other.label : "";
      if (a == b || a.empty() || b.empty())
        out.push_back(name + ": samples alike in " + row.metric);
    }
  }
  return out;
}

}  // namespace ninf::daemon
