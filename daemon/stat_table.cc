#include "daemon/stat_table.h"

#include <cstdio>

namespace ninf::daemon {
namespace {

// The value as a double, for a fixed-point status line or a sample.
double StatNumber(const StatValue &value) {
  if (auto *v = std::get_if<int64_t>(&value)) return static_cast<double>(*v);
  if (auto *v = std::get_if<uint64_t>(&value)) return static_cast<double>(*v);
  if (auto *v = std::get_if<double>(&value)) return *v;
  return 0;
}

// The value as the unsigned decimal the status lines always printed (a
// double truncated, a signed value cast as before).
uint64_t StatWhole(const StatValue &value) {
  if (auto *v = std::get_if<int64_t>(&value)) return static_cast<uint64_t>(*v);
  if (auto *v = std::get_if<uint64_t>(&value)) return *v;
  if (auto *v = std::get_if<double>(&value)) return static_cast<uint64_t>(*v);
  return 0;
}

std::string Fixed(const char *format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

}  // namespace

const char *MetricTypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

std::string FormatStatValue(const StatValue &value, StatFormat format) {
  switch (format) {
    case StatFormat::kInteger:
      return std::to_string(StatWhole(value));
    case StatFormat::kMicros:
      return Fixed("%.6f", StatNumber(value));
    case StatFormat::kHundredths:
      return Fixed("%.2f", StatNumber(value));
    case StatFormat::kTenths:
      return Fixed("%.1f", StatNumber(value));
    case StatFormat::kText:
      if (auto *text = std::get_if<std::string>(&value)) return *text;
      return std::to_string(StatWhole(value));
  }
  return "";
}

std::string_view LabelKey(const char *label) {
  const std::string_view text(label);
  return text.substr(0, text.find('='));
}

std::string JoinLabels(const std::string &a, const std::string &b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + "," + b;
}

void WriteStatSample(PrometheusText *out, const char *metric, const std::string &labels,
                     const StatValue &value) {
  const auto *h = std::get_if<HistogramView>(&value);
  if (h == nullptr) {
    out->Sample(metric, labels, StatNumber(value));
    return;
  }
  const std::string name(metric);
  uint64_t cumulative = 0;
  for (std::size_t b = 0; b < h->counts.size(); ++b) {
    cumulative += h->counts[b];
    const std::string le = b < h->bounds.size() ? PrometheusText::Number(h->bounds[b]) : "+Inf";
    out->Sample(name + "_bucket", JoinLabels(labels, PrometheusText::Label("le", le)),
                static_cast<double>(cumulative));
  }
  out->Sample(name + "_sum", labels, h->sum);
  out->Sample(name + "_count", labels, static_cast<double>(h->count));
}

}  // namespace ninf::daemon
