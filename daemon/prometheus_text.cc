#include "daemon/prometheus_text.h"

#include <charconv>
#include <cmath>

namespace ninf::daemon {

void PrometheusText::Head(const char *name, const char *type, const char *help) {
  out_ += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void PrometheusText::Sample(const std::string &name, const std::string &labels, double value) {
  out_ += name + (labels.empty() ? "" : "{" + labels + "}") + " " + Number(value) + "\n";
}

void PrometheusText::Metric(const char *name, const char *type, const char *help, double value) {
  Head(name, type, help);
  Sample(name, "", value);
}

std::string PrometheusText::Label(const char *key, const std::string &value) {
  std::string out = std::string(key) + "=\"";
  for (char c : value) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string PrometheusText::Number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // Bucket bounds must read the same in every scrape: "0.005", never
  // "0.0050000000000000001".
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("NaN");
}

}  // namespace ninf::daemon
