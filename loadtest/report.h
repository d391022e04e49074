// The load test's records and what is computed from them, as pure
// functions: one CSV row per call, one sample of each server's statistics
// per sampling period, and the summary the seed paper's tables report
// (004, Tables 3-8: performance and throughput max/min/mean, server
// utilization and load), as a Markdown row.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ninf::loadtest {

// One call, as a client recorded it.
struct CallRow {
  int client = 0;
  int step = 0;
  int size = 0;         // the workload's n or m of this call
  double start = 0;     // seconds since the run began
  double response = 0;  // T_response: the whole call, as the client saw it
  double wait = 0;      // T_wait: queued for a job slot on the server
  double transfer = 0;  // arguments into the executable + results back
  double compute = 0;   // in the routine
  uint64_t bytes = 0;   // array bytes both ways
  double flops = 0;     // the workload's operation count
  std::string server;   // host:port
  int threads = 0;      // granted by the server
  std::string outcome;  // ok, error, wrong
  std::string detail;   // for failures

  double Mflops() const { return response > 0 ? flops / response / 1e6 : 0; }
  // MB/s over the transfer time (0 when nothing was timed).
  double Throughput() const { return transfer > 0 ? bytes / transfer / 1e6 : 0; }
};

// The CSV header and one row; ParseCsvRow reads what FormatCsvRow wrote.
std::string CsvHeader();
std::string FormatCsvRow(const CallRow &row);
bool ParseCsvRow(const std::string &line, CallRow *row);

// One server's statistics at one moment (`ninfd --status` lines).
struct ServerSample {
  double at = 0;  // seconds since the run began
  double busy_core_seconds = 0;
  int cores = 1;
  int running = 0;
  int queued = 0;
  double load_average = 0;
  bool has_stats = false;  // the statistics query answered (the fields above)
  // With --server-cgroup: the group's CPU seconds so far (< 0: not read),
  // its CPUs, and which group (several servers may share one).
  double cpu_seconds = -1;
  int cpu_count = 0;
  std::string cgroup;
};

struct MinMaxMean {
  double min = 0, max = 0, mean = 0;
  std::size_t count = 0;
};
MinMaxMean Describe(const std::vector<double> &values);
// The p-th percentile (0..100) by nearest rank; 0 for no values.
double Percentile(std::vector<double> values, double p);

struct Summary {
  std::size_t calls = 0;
  std::size_t failed = 0;
  double duration = 0;  // seconds, the first call's start to the last one's end
  MinMaxMean mflops;    // of the calls that succeeded
  MinMaxMean throughput;
  double response_mean = 0, response_p95 = 0;
  double wait_mean = 0, wait_max = 0;
  double transfer_mean = 0;
  double aggregate_gflops = 0;  // operations of the successful calls / duration
  // Per server: busy core-seconds grown / (seconds x cores) between its
  // first and last sample, and its mean load average and jobs (running +
  // queued) over the samples.
  std::map<std::string, double> utilization;
  // Measured: the server's control group's CPU seconds grown / (seconds x
  // its CPUs), between its first and last reading (--server-cgroup).
  std::map<std::string, double> cpu_utilization;
  std::map<std::string, double> load_average;
  std::map<std::string, double> jobs;
  // Per workload size, for mixed runs (--size a,b): what each class of job
  // saw.
  struct BySize {
    std::size_t calls = 0, failed = 0;
    double response_mean = 0, response_p95 = 0;
    double wait_mean = 0, wait_max = 0;
  };
  std::map<int, BySize> by_size;
};

Summary Summarize(const std::vector<CallRow> &rows,
                  const std::map<std::string, std::vector<ServerSample>> &samples);

// A Markdown table in the seed's form: MarkdownHeader() once, then one
// MarkdownRow per run. `label` names the run (budget, sites, ...).
std::string MarkdownHeader();
// `sizes` is the run's size, or its sizes joined by '+' (SizesText).
std::string MarkdownRow(const std::string &label, const std::string &workload,
                        const std::string &sizes, int clients, const Summary &s);
std::string SizesText(const std::vector<int> &sizes);

// The per-size table of a mixed run: one row per size.
std::string SizeTable(const Summary &s);

// One machine-readable line per run, for plots (loadtest/plot.py).
std::string SummaryCsvHeader();
std::string SummaryCsvRow(const std::string &label, const std::string &workload,
                          const std::string &sizes, int clients, const Summary &s);

}  // namespace ninf::loadtest
