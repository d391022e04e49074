#include "loadtest/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>
#include <set>
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

// `get` of the samples at time t, linear between the two that bracket it;
// nullopt outside the samples' span.
template <class Get>
std::optional<double> At(const std::vector<ServerSample> &list, double t, Get get) {
  if (list.empty() || t < list.front().at || t > list.back().at) return std::nullopt;
  for (std::size_t i = 1; i < list.size(); ++i) {
    const ServerSample &a = list[i - 1], &b = list[i];
    if (b.at < t) continue;
    const double span = b.at - a.at;
    if (span <= 0) return get(b);
    return get(a) + (get(b) - get(a)) * (t - a.at) / span;
  }
  return get(list.back());
}

// A cell that may be empty (not measured).
std::string Cell(std::optional<double> v, int digits) { return v ? Fixed(*v, digits) : ""; }

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

namespace {

// What the calls' rows add up to before they are described.
struct CallFigures {
  std::vector<double> mflops, throughput, response, wait, transfer;
  std::map<int, std::vector<double>> size_response, size_wait;
  std::map<std::string, std::vector<double>> server_mflops;
  std::map<std::string, double> server_work, server_bytes;
  double first = 0, last = 0, work = 0, bytes = 0;
};

// Counts every row into *s (calls, failures per size and server) and the
// successful ones' figures into *f.
void CountCalls(const std::vector<CallRow> &rows, Summary *s, CallFigures *f) {
  bool any = false;
  for (const CallRow &r : rows) {
    f->first = any ? std::min(f->first, r.start) : r.start;
    f->last = any ? std::max(f->last, r.start + r.response) : r.start + r.response;
    any = true;
    Summary::BySize &by = s->by_size[r.size];
    ++by.calls;
    Summary::ByServer &server = s->by_server[r.server];
    ++server.calls;
    if (r.outcome != "ok") {
      ++s->failed;
      ++by.failed;
      ++server.failed;
      if (r.outcome == "unreachable") ++s->unreachable;
      continue;
    }
    f->server_mflops[r.server].push_back(r.Mflops());
    f->server_work[r.server] += r.flops;
    f->server_bytes[r.server] += static_cast<double>(r.bytes);
    f->bytes += static_cast<double>(r.bytes);
    f->mflops.push_back(r.Mflops());
    if (r.transfer > 0) f->throughput.push_back(r.Throughput());
    f->response.push_back(r.response);
    f->wait.push_back(r.wait);
    f->transfer.push_back(r.transfer);
    f->size_response[r.size].push_back(r.response);
    f->size_wait[r.size].push_back(r.wait);
    f->work += r.flops;
  }
}

// The calls' part of the summary.
void SummarizeCalls(const std::vector<CallRow> &rows, Summary *s) {
  s->calls = rows.size();
  CallFigures f;
  CountCalls(rows, s, &f);
  s->duration = f.last - f.first;
  s->mflops = Describe(f.mflops);
  s->throughput = Describe(f.throughput);
  const Times all = TimesOf(f.response, f.wait);
  s->response_mean = all.response_mean;
  s->response_p95 = all.response_p95;
  s->wait_mean = all.wait_mean;
  s->wait_max = all.wait_max;
  s->transfer_mean = MeanOf(f.transfer);
  s->aggregate_gflops = s->duration > 0 ? f.work / s->duration / 1e9 : 0;
  s->aggregate_mbs = s->duration > 0 ? f.bytes / s->duration / 1e6 : 0;
  double busy = 0;
  for (const CallRow &r : rows) busy += r.response;
  s->in_flight = s->duration > 0 ? busy / s->duration : 0;
  for (auto &[name, server] : s->by_server) {
    server.mflops_mean = MeanOf(f.server_mflops[name]);
    server.gflops = s->duration > 0 ? f.server_work[name] / s->duration / 1e9 : 0;
    server.mbs = s->duration > 0 ? f.server_bytes[name] / s->duration / 1e6 : 0;
  }
  for (auto &[size, by] : s->by_size) {
    const Times t = TimesOf(f.size_response[size], f.size_wait[size]);
    by.response_mean = t.response_mean;
    by.response_p95 = t.response_p95;
    by.wait_mean = t.wait_mean;
    by.wait_max = t.wait_max;
  }
}

// The servers' samples added up over every server.
struct SampleTotals {
  double busy = 0, capacity = 0;
  // Per control group: CPU seconds grown and (seconds x CPUs), once each.
  std::map<std::string, std::pair<double, double>> groups;
};

// One server's samples: its measured CPU use, utilization, load and jobs.
void SummarizeServer(const std::string &server, const std::vector<ServerSample> &all_samples,
                     Summary *s, SampleTotals *t) {
  std::vector<ServerSample> list, measured;
  for (const ServerSample &x : all_samples) {
    if (x.has_stats) list.push_back(x);
    if (x.cpu_seconds >= 0) measured.push_back(x);
  }
  if (measured.size() >= 2) {
    const ServerSample &a = measured.front(), &b = measured.back();
    const double span = b.at - a.at;
    // Not clamped: a measurement, read at the moment it is stamped.
    if (span > 0 && b.cpu_count > 0) {
      const double grown = std::max(0.0, b.cpu_seconds - a.cpu_seconds);
      s->cpu_utilization[server] = grown / (span * b.cpu_count);
      t->groups[b.cgroup.empty() ? server : b.cgroup] = {grown, span * b.cpu_count};
    }
  }
  if (list.empty()) return;
  const ServerSample &a = list.front(), &b = list.back();
  const double span = b.at - a.at;
  if (span > 0) {
    const double grown = std::max(0.0, b.busy_core_seconds - a.busy_core_seconds);
    const double capacity = span * std::max(1, b.cores);
    s->utilization[server] = std::clamp(grown / capacity, 0.0, 1.0);
    t->busy += grown;
    t->capacity += capacity;
  }
  double load = 0, running = 0, queued = 0;
  for (const ServerSample &x : list) {
    load += x.load_average;
    running += x.running;
    queued += x.queued;
  }
  const double n = static_cast<double>(list.size());
  s->load_average[server] = load / n;
  s->running[server] = running / n;
  s->queued[server] = queued / n;
  s->jobs[server] = (running + queued) / n;
  s->total.running += running / n;
  s->total.queued += queued / n;
  s->total.jobs += (running + queued) / n;
}

}  // namespace

Summary Summarize(const std::vector<CallRow> &rows,
                  const std::map<std::string, std::vector<ServerSample>> &samples) {
  Summary s;
  SummarizeCalls(rows, &s);
  SampleTotals t;
  for (const auto &[server, all_samples] : samples) SummarizeServer(server, all_samples, &s, &t);
  if (t.capacity > 0) s.total.utilization = std::clamp(t.busy / t.capacity, 0.0, 1.0);
  double cpu_grown = 0, cpu_capacity = 0;
  for (const auto &[group, figures] : t.groups) {
    cpu_grown += figures.first;
    cpu_capacity += figures.second;
  }
  if (cpu_capacity > 0) s.total.cpu_utilization = cpu_grown / cpu_capacity;
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

std::string SiteTable(const std::vector<CallRow> &rows, const std::vector<std::string> &sites,
                      int clients) {
  std::ostringstream out;
  out << "| site | clients | calls | failed | T_response mean / p95 (s) | T_wait mean / max (s) | "
         "MB/s mean |\n"
      << "|---|---|---|---|---|---|---|\n";
  const std::size_t n = sites.size();
  for (std::size_t k = 0; k < n; ++k) {
    int mine = 0;
    for (int i = 0; i < clients; ++i) mine += static_cast<std::size_t>(i) % n == k;
    std::size_t calls = 0, failed = 0;
    std::vector<double> response, wait, mbs;
    for (const CallRow &r : rows) {
      if (r.client < 0 || static_cast<std::size_t>(r.client) % n != k) continue;
      ++calls;
      if (r.outcome != "ok") {
        ++failed;
        continue;
      }
      response.push_back(r.response);
      wait.push_back(r.wait);
      if (r.Throughput() > 0) mbs.push_back(r.Throughput());
    }
    const Times t = TimesOf(response, wait);
    out << "| " << sites[k] << " | " << mine << " | " << calls << " | " << failed << " | "
        << Fixed(t.response_mean, 3) << " / " << Fixed(t.response_p95, 3) << " | "
        << Fixed(t.wait_mean, 3) << " / " << Fixed(t.wait_max, 3) << " | " << Fixed(MeanOf(mbs), 1)
        << " |\n";
  }
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

std::string ServerTable(const Summary &s) {
  std::set<std::string> names;
  for (const auto &entry : s.by_server) names.insert(entry.first);
  for (const auto &entry : s.jobs) names.insert(entry.first);
  for (const auto &entry : s.cpu_utilization) names.insert(entry.first);
  auto get = [](const std::map<std::string, double> &m, const std::string &k, int digits) {
    const auto it = m.find(k);
    return it == m.end() ? std::string("-") : Fixed(it->second, digits);
  };
  auto total = [](double v) { return v < 0 ? std::string("-") : Fixed(v, 2); };
  std::ostringstream out;
  out << "| server | calls | failed | Mflops mean | GF/s | MB/s | utilization | cpu_util | "
         "running | queued | jobs | load avg |\n"
      << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const std::string &name : names) {
    const auto it = s.by_server.find(name);
    const Summary::ByServer by = it == s.by_server.end() ? Summary::ByServer{} : it->second;
    out << "| " << (name.empty() ? "(none)" : name) << " | " << by.calls << " | " << by.failed
        << " | " << Fixed(by.mflops_mean, 0) << " | " << Fixed(by.gflops, 2) << " | "
        << Fixed(by.mbs, 1) << " | " << get(s.utilization, name, 2) << " | "
        << get(s.cpu_utilization, name, 2) << " | " << get(s.running, name, 2) << " | "
        << get(s.queued, name, 2) << " | " << get(s.jobs, name, 2) << " | "
        << get(s.load_average, name, 2) << " |\n";
  }
  out << "| all | " << s.calls << " | " << s.failed << " | " << Fixed(s.mflops.mean, 0) << " | "
      << Fixed(s.aggregate_gflops, 2) << " | " << Fixed(s.aggregate_mbs, 1) << " | "
      << total(s.total.utilization) << " | " << total(s.total.cpu_utilization) << " | "
      << Fixed(s.total.running, 2) << " | " << Fixed(s.total.queued, 2) << " | "
      << Fixed(s.total.jobs, 2) << " | - |\n";
  return out.str();
}

std::string SummaryCsvHeader() {
  return "label,workload,size,clients,calls,failed,mflops_max,mflops_min,mflops_mean,"
         "throughput_mean,response_mean,response_p95,wait_mean,wait_max,aggregate_gflops,"
         "utilization_mean,cpu_util_mean,load_mean,jobs_mean,throughput_max,throughput_min,"
         "aggregate_mbs,utilization_total,cpu_util_total,running_total,queued_total,jobs_total,"
         "unreachable,in_flight\n";
}

std::string SummaryCsvRow(const std::string &label, const std::string &workload,
                          const std::string &size, int clients, const Summary &s) {
  // Several servers: the mean over them (the Markdown table has each).
  auto mean = [](const std::map<std::string, double> &per_server) {
    double sum = 0;
    for (const auto &entry : per_server) sum += entry.second;
    return per_server.empty() ? 0.0 : sum / static_cast<double>(per_server.size());
  };
  // Not measured (no --server-cgroup, no sample) is an empty field, not a 0.
  auto total = [](double v) { return v < 0 ? std::string() : Fixed(v, 4); };
  const std::string cpu_util = s.cpu_utilization.empty() ? "" : Fixed(mean(s.cpu_utilization), 4);
  std::ostringstream out;
  out << CsvSafe(label) << ',' << workload << ',' << CsvSafe(size) << ',' << clients << ','
      << s.calls << ',' << s.failed << ',' << Fixed(s.mflops.max, 2) << ','
      << Fixed(s.mflops.min, 2) << ',' << Fixed(s.mflops.mean, 2) << ','
      << Fixed(s.throughput.mean, 2) << ',' << Fixed(s.response_mean, 6) << ','
      << Fixed(s.response_p95, 6) << ',' << Fixed(s.wait_mean, 6) << ',' << Fixed(s.wait_max, 6)
      << ',' << Fixed(s.aggregate_gflops, 4) << ',' << Fixed(mean(s.utilization), 4) << ','
      << cpu_util << ',' << Fixed(mean(s.load_average), 3) << ',' << Fixed(mean(s.jobs), 3) << ','
      << Fixed(s.throughput.max, 2) << ',' << Fixed(s.throughput.min, 2) << ','
      << Fixed(s.aggregate_mbs, 3) << ',' << total(s.total.utilization) << ','
      << total(s.total.cpu_utilization) << ',' << Fixed(s.total.running, 3) << ','
      << Fixed(s.total.queued, 3) << ',' << Fixed(s.total.jobs, 3) << ',' << s.unreachable << ','
      << Fixed(s.in_flight, 3) << '\n';
  return out.str();
}

}  // namespace ninf::loadtest

namespace ninf::loadtest {

std::string SeriesCsvHeader() {
  return "t_s,server,running,queued,utilization,cpu_util,calls,failed,gflops,mbs\n";
}

namespace {

// The calls of one server that ended in one second.
struct SeriesEnded {
  int calls = 0, failed = 0;
  double flops = 0, bytes = 0;
};

// Per server: the samples with statistics, those with a group's CPU time,
// and per second the calls that ended in it.
struct SeriesServer {
  std::vector<ServerSample> stats, cpu;
  std::vector<SeriesEnded> ended;
};

std::map<std::string, SeriesServer> SeriesServers(
    const std::vector<CallRow> &rows,
    const std::map<std::string, std::vector<ServerSample>> &samples, int n) {
  std::map<std::string, SeriesServer> servers;
  for (const auto &[name, list] : samples) {
    SeriesServer &server = servers[name];
    for (const ServerSample &x : list) {
      if (x.has_stats) server.stats.push_back(x);
      if (x.cpu_seconds >= 0 && x.cpu_count > 0) server.cpu.push_back(x);
    }
  }
  for (const CallRow &r : rows) servers[r.server];
  for (auto &entry : servers) entry.second.ended.assign(static_cast<std::size_t>(n), SeriesEnded{});
  for (const CallRow &r : rows) {
    const int k = std::clamp(static_cast<int>(std::floor(r.start + r.response)), 0, n - 1);
    SeriesEnded &e = servers[r.server].ended[static_cast<std::size_t>(k)];
    ++e.calls;
    if (r.outcome != "ok") {
      ++e.failed;
      continue;
    }
    e.flops += r.flops;
    e.bytes += static_cast<double>(r.bytes);
  }
  return servers;
}

// One second [lo, hi) of the series, every server's row and the sums the
// "all" row shows.
struct SeriesSecond {
  int k;
  double lo, hi, width;
  SeriesEnded all{};
  double running_all = 0, queued_all = 0, busy_all = 0, cores_all = 0;
  bool any_stats = false;
  std::map<std::string, std::pair<double, double>> groups{};  // cgroup: grown, CPUs

  // Growth over the part of the second that the samples span (the first
  // sample comes a little after 0, the last may end the run early).
  template <class Get>
  std::optional<double> Growth(const std::vector<ServerSample> &list, Get get, double *span) const {
    if (list.empty()) return std::nullopt;
    const double a = std::max(lo, list.front().at), b = std::min(hi, list.back().at);
    *span = b - a;
    if (*span <= 0) return std::nullopt;
    const std::optional<double> v0 = At(list, a, get), v1 = At(list, b, get);
    if (!v0 || !v1) return std::nullopt;
    return std::max(0.0, *v1 - *v0);
  }

  void ServerRow(std::ostringstream &out, const std::string &name, const SeriesServer &server) {
    // Running and queued: the mean of this second's samples.
    double running = 0, queued = 0;
    int count = 0;
    for (const ServerSample &x : server.stats)
      if (x.at >= lo && x.at < hi) {
        running += x.running;
        queued += x.queued;
        ++count;
      }
    std::optional<double> run_mean, queue_mean, util, cpu;
    if (count > 0) {
      run_mean = running / count;
      queue_mean = queued / count;
      running_all += *run_mean;
      queued_all += *queue_mean;
      any_stats = true;
    }
    double span = 0;
    auto busy = [](const ServerSample &x) { return x.busy_core_seconds; };
    if (const std::optional<double> grown = Growth(server.stats, busy, &span)) {
      const double cores = std::max(1, server.stats.back().cores);
      util = std::clamp(*grown / (span * cores), 0.0, 1.0);
      busy_all += *grown;
      cores_all += span * cores;
    }
    auto used = [](const ServerSample &x) { return x.cpu_seconds; };
    if (const std::optional<double> grown = Growth(server.cpu, used, &span)) {
      const ServerSample &last = server.cpu.back();
      cpu = *grown / (span * last.cpu_count);
      groups[last.cgroup.empty() ? name : last.cgroup] = {*grown, span * last.cpu_count};
    }
    const SeriesEnded &e = server.ended[static_cast<std::size_t>(k)];
    all.calls += e.calls;
    all.failed += e.failed;
    all.flops += e.flops;
    all.bytes += e.bytes;
    out << k << ',' << CsvSafe(name.empty() ? "(none)" : name) << ',' << Cell(run_mean, 2) << ','
        << Cell(queue_mean, 2) << ',' << Cell(util, 4) << ',' << Cell(cpu, 4) << ',' << e.calls
        << ',' << e.failed << ',' << Fixed(e.flops / 1e9 / width, 4) << ','
        << Fixed(e.bytes / 1e6 / width, 3) << '\n';
  }

  void AllRow(std::ostringstream &out) const {
    double grown = 0, capacity = 0;
    for (const auto &[group, figures] : groups) {
      grown += figures.first;
      capacity += figures.second;
    }
    out << k << ",all," << (any_stats ? Fixed(running_all, 2) : "") << ','
        << (any_stats ? Fixed(queued_all, 2) : "") << ','
        << (cores_all > 0 ? Fixed(std::clamp(busy_all / cores_all, 0.0, 1.0), 4) : "") << ','
        << (capacity > 0 ? Fixed(grown / capacity, 4) : "") << ',' << all.calls << ',' << all.failed
        << ',' << Fixed(all.flops / 1e9 / width, 4) << ',' << Fixed(all.bytes / 1e6 / width, 3)
        << '\n';
  }
};

}  // namespace

std::string SeriesCsv(const std::vector<CallRow> &rows,
                      const std::map<std::string, std::vector<ServerSample>> &samples,
                      double seconds) {
  for (const CallRow &r : rows) seconds = std::max(seconds, r.start + r.response);
  const int n = std::max(1, static_cast<int>(std::ceil(seconds)));
  const std::map<std::string, SeriesServer> servers = SeriesServers(rows, samples, n);
  std::ostringstream out;
  out << SeriesCsvHeader();
  for (int k = 0; k < n; ++k) {
    const double lo = k, hi = std::min<double>(k + 1, std::max(seconds, lo + 1e-9));
    SeriesSecond second{.k = k, .lo = lo, .hi = hi, .width = hi - lo};
    for (const auto &[name, server] : servers) second.ServerRow(out, name, server);
    second.AllRow(out);
  }
  return out.str();
}

}  // namespace ninf::loadtest
