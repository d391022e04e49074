// Writing the Prometheus text exposition format (version 0.0.4): what
// ninfd's and ninf-meta's metrics (metrics_text.h, metaserver/meta_metrics.cc)
// are written with, so that escaping and number formatting live in one
// place.
#pragma once

#include <string>

namespace ninf::daemon {

class PrometheusText {
 public:
  // # HELP and # TYPE lines of a metric family.
  void Head(const char *name, const char *type, const char *help);
  // One sample; `labels` as made by Label(), joined by commas ("" for none).
  void Sample(const std::string &name, const std::string &labels, double value);
  // Head and one unlabelled sample.
  void Metric(const char *name, const char *type, const char *help, double value);

  // key="value", the value escaped as the format requires.
  static std::string Label(const char *key, const std::string &value);
  // The shortest text that reads back as the same double ("0.005", "+Inf").
  static std::string Number(double value);

  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

}  // namespace ninf::daemon
