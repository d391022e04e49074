#include "loadtest/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

namespace ninf::loadtest {
namespace {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Commas and newlines would break the CSV: the detail text loses them.
std::string CsvSafe(std::string text) {
  for (char &c : text)
    if (c == ',' || c == '\n' || c == '\r' || c == '"') c = ' ';
  return text;
}

double MeanOf(const std::vector<double> &v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

std::string Mmm(const MinMaxMean &m, int digits) {
  if (m.count == 0) return "-";
  return Fixed(m.max, digits) + " / " + Fixed(m.min, digits) + " / " + Fixed(m.mean, digits);
}

// "a:0.91 b:0.40" for several servers, "0.91" for one.
std::string PerServer(const std::map<std::string, double> &values, int digits) {
  if (values.empty()) return "-";
  if (values.size() == 1) return Fixed(values.begin()->second, digits);
  std::string out;
  for (const auto &entry : values) {
    if (!out.empty()) out += " ";
    out += entry.first + ":" + Fixed(entry.second, digits);
  }
  return out;
}

// Response and wait figures of a set of calls.
struct Times {
  double response_mean, response_p95, wait_mean, wait_max;
};
Times TimesOf(const std::vector<double> &response, const std::vector<double> &wait) {
  return {MeanOf(response), Percentile(response, 95), MeanOf(wait),
          wait.empty() ? 0 : *std::max_element(wait.begin(), wait.end())};
}

}  // namespace

std::string CsvHeader() {
  return "client,step,size,start_s,response_s,wait_s,transfer_s,compute_s,bytes,flops,mflops,"
         "throughput_mbs,server,threads,outcome,detail";
}

std::string FormatCsvRow(const CallRow &r) {
  std::ostringstream out;
  out << r.client << ',' << r.step << ',' << r.size << ',' << Fixed(r.start, 6) << ','
      << Fixed(r.response, 6) << ',' << Fixed(r.wait, 6) << ',' << Fixed(r.transfer, 6) << ','
      << Fixed(r.compute, 6) << ',' << r.bytes << ',' << Fixed(r.flops, 0) << ','
      << Fixed(r.Mflops(), 2) << ',' << Fixed(r.Throughput(), 2) << ',' << CsvSafe(r.server) << ','
      << r.threads << ',' << CsvSafe(r.outcome) << ',' << CsvSafe(r.detail);
  return out.str();
}

bool ParseCsvRow(const std::string &line, CallRow *r) {
  std::vector<std::string> f;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) f.push_back(field);
  if (!line.empty() && line.back() == ',') f.emplace_back();
  if (f.size() != 16) return false;
  try {
    r->client = std::stoi(f[0]);
    r->step = std::stoi(f[1]);
    r->size = std::stoi(f[2]);
    r->start = std::stod(f[3]);
    r->response = std::stod(f[4]);
    r->wait = std::stod(f[5]);
    r->transfer = std::stod(f[6]);
    r->compute = std::stod(f[7]);
    r->bytes = std::stoull(f[8]);
    r->flops = std::stod(f[9]);
    r->server = f[12];
    r->threads = std::stoi(f[13]);
    r->outcome = f[14];
    r->detail = f[15];
  } catch (const std::exception &) {
    return false;
  }
  return true;
}

MinMaxMean Describe(const std::vector<double> &values) {
  MinMaxMean m;
  m.count = values.size();
  if (values.empty()) return m;
  m.min = *std::min_element(values.begin(), values.end());
  m.max = *std::max_element(values.begin(), values.end());
  m.mean = MeanOf(values);
  return m;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const std::size_t i = static_cast<std::size_t>(std::clamp(rank, 1.0, double(values.size())));
  return values[i - 1];
}

Summary Summarize(const std::vector<CallRow> &rows,
                  const std::map<std::string, std::vector<ServerSample>> &samples) {
  Summary s;
  s.calls = rows.size();
  std::vector<double> mflops, throughput, response, wait, transfer;
  std::map<int, std::vector<double>> size_response, size_wait;
  double first = 0, last = 0, work = 0;
  bool any = false;
  for (const CallRow &r : rows) {
    first = any ? std::min(first, r.start) : r.start;
    last = any ? std::max(last, r.start + r.response) : r.start + r.response;
    any = true;
    Summary::BySize &by = s.by_size[r.size];
    ++by.calls;
    if (r.outcome != "ok") {
      ++s.failed;
      ++by.failed;
      continue;
    }
    mflops.push_back(r.Mflops());
    if (r.transfer > 0) throughput.push_back(r.Throughput());
    response.push_back(r.response);
    wait.push_back(r.wait);
    transfer.push_back(r.transfer);
    size_response[r.size].push_back(r.response);
    size_wait[r.size].push_back(r.wait);
    work += r.flops;
  }
  s.duration = last - first;
  s.mflops = Describe(mflops);
  s.throughput = Describe(throughput);
  const Times all = TimesOf(response, wait);
  s.response_mean = all.response_mean;
  s.response_p95 = all.response_p95;
  s.wait_mean = all.wait_mean;
  s.wait_max = all.wait_max;
  s.transfer_mean = MeanOf(transfer);
  s.aggregate_gflops = s.duration > 0 ? work / s.duration / 1e9 : 0;
  for (auto &[size, by] : s.by_size) {
    const Times t = TimesOf(size_response[size], size_wait[size]);
    by.response_mean = t.response_mean;
    by.response_p95 = t.response_p95;
    by.wait_mean = t.wait_mean;
    by.wait_max = t.wait_max;
  }
  for (const auto &[server, all_samples] : samples) {
    std::vector<ServerSample> list, measured;
    for (const ServerSample &x : all_samples) {
      if (x.has_stats) list.push_back(x);
      if (x.cpu_seconds >= 0) measured.push_back(x);
    }
    if (measured.size() >= 2) {
      const ServerSample &a = measured.front(), &b = measured.back();
      const double span = b.at - a.at;
      // Not clamped: a measurement, read at the moment it is stamped.
      if (span > 0 && b.cpu_count > 0)
        s.cpu_utilization[server] =
            std::max(0.0, b.cpu_seconds - a.cpu_seconds) / (span * b.cpu_count);
    }
    if (list.empty()) continue;
    const ServerSample &a = list.front(), &b = list.back();
    const double span = b.at - a.at;
    if (span > 0)
      s.utilization[server] = std::clamp(
          (b.busy_core_seconds - a.busy_core_seconds) / (span * std::max(1, b.cores)), 0.0, 1.0);
    double load = 0, jobs = 0;
    for (const ServerSample &x : list) {
      load += x.load_average;
      jobs += x.running + x.queued;
    }
    s.load_average[server] = load / static_cast<double>(list.size());
    s.jobs[server] = jobs / static_cast<double>(list.size());
  }
  return s;
}

std::string MarkdownHeader() {
  return "| run | workload | size | c | calls | failed | Mflops max / min / mean | "
         "MB/s max / min / mean | T_response mean / p95 (s) | T_wait mean / max (s) | "
         "aggregate GF/s | utilization | cpu_util | load avg | jobs |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
}

std::string SizesText(const std::vector<int> &sizes) {
  std::string out;
  for (int n : sizes) out += (out.empty() ? "" : "+") + std::to_string(n);
  return out;
}

std::string SizeTable(const Summary &s) {
  std::ostringstream out;
  out << "| size | calls | failed | T_response mean / p95 (s) | T_wait mean / max (s) |\n"
      << "|---|---|---|---|---|\n";
  for (const auto &[size, b] : s.by_size)
    out << "| " << size << " | " << b.calls << " | " << b.failed << " | "
        << Fixed(b.response_mean, 3) << " / " << Fixed(b.response_p95, 3) << " | "
        << Fixed(b.wait_mean, 3) << " / " << Fixed(b.wait_max, 3) << " |\n";
  return out.str();
}

std::string MarkdownRow(const std::string &label, const std::string &workload,
                        const std::string &size, int clients, const Summary &s) {
  std::ostringstream out;
  out << "| " << label << " | " << workload << " | " << size << " | " << clients << " | " << s.calls
      << " | " << s.failed << " | " << Mmm(s.mflops, 0) << " | " << Mmm(s.throughput, 1) << " | "
      << Fixed(s.response_mean, 3) << " / " << Fixed(s.response_p95, 3) << " | "
      << Fixed(s.wait_mean, 3) << " / " << Fixed(s.wait_max, 3) << " | "
      << Fixed(s.aggregate_gflops, 2) << " | " << PerServer(s.utilization, 2) << " | "
      << PerServer(s.cpu_utilization, 2) << " | " << PerServer(s.load_average, 2) << " | "
      << PerServer(s.jobs, 2) << " |\n";
  return out.str();
}

std::string SummaryCsvHeader() {
  return "label,workload,size,clients,calls,failed,mflops_max,mflops_min,mflops_mean,"
         "throughput_mean,response_mean,response_p95,wait_mean,wait_max,aggregate_gflops,"
         "utilization_mean,cpu_util_mean,load_mean,jobs_mean\n";
}

std::string SummaryCsvRow(const std::string &label, const std::string &workload,
                          const std::string &size, int clients, const Summary &s) {
  // Several servers: the mean over them (the Markdown table has each).
  auto mean = [](const std::map<std::string, double> &per_server) {
    double sum = 0;
    for (const auto &entry : per_server) sum += entry.second;
    return per_server.empty() ? 0.0 : sum / static_cast<double>(per_server.size());
  };
  // Not measured (no --server-cgroup) is an empty field, not a 0.
  const std::string cpu_util = s.cpu_utilization.empty() ? "" : Fixed(mean(s.cpu_utilization), 4);
  std::ostringstream out;
  out << CsvSafe(label) << ',' << workload << ',' << CsvSafe(size) << ',' << clients << ','
      << s.calls << ',' << s.failed << ',' << Fixed(s.mflops.max, 2) << ','
      << Fixed(s.mflops.min, 2) << ',' << Fixed(s.mflops.mean, 2) << ','
      << Fixed(s.throughput.mean, 2) << ',' << Fixed(s.response_mean, 6) << ','
      << Fixed(s.response_p95, 6) << ',' << Fixed(s.wait_mean, 6) << ',' << Fixed(s.wait_max, 6)
      << ',' << Fixed(s.aggregate_gflops, 4) << ',' << Fixed(mean(s.utilization), 4) << ','
      << cpu_util << ',' << Fixed(mean(s.load_average), 3) << ',' << Fixed(mean(s.jobs), 3) << '\n';
  return out.str();
}

}  // namespace ninf::loadtest
