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
  std::map<std::string, double> running;  // mean calls holding a slot over the samples
  std::map<std::string, double> queued;   // mean calls waiting for one
  double aggregate_mbs = 0;               // array bytes of the successful calls / duration
  // Calls in progress on average, from the clients' records (Little's law:
  // every call's T_response, failed ones included, / duration): exact where
  // the sampled jobs can miss short calls between samples.
  double in_flight = 0;
  std::size_t unreachable = 0;  // failed calls that could not connect
  // Per server, from the calls it served (a failed call counts at the
  // server it was sent to).
  struct ByServer {
    std::size_t calls = 0, failed = 0;
    double mflops_mean = 0, gflops = 0, mbs = 0;  // aggregates over the run's duration
  };
  std::map<std::string, ByServer> by_server;
  // Across all servers: booked utilization = all busy core-seconds grown /
  // all servers' (seconds x cores); cpu_util = all control groups' CPU
  // seconds grown / their (seconds x CPUs), a group shared by several
  // servers counted once; running, queued and jobs summed. Negative: no
  // sample gave it.
  struct Totals {
    double utilization = -1, cpu_utilization = -1;
    double running = 0, queued = 0, jobs = 0;
  } total;
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

// The per-site table of a run whose clients span namespaces (--netns A,B,...:
// client i runs in sites[i % sites.size()]): one row per site, from the
// calls its `clients` made.
std::string SiteTable(const std::vector<CallRow> &rows, const std::vector<std::string> &sites,
                      int clients);

// One row per server and a row "all" for the totals (printed when a run
// has several servers).
std::string ServerTable(const Summary &s);

// The per-second time series (--series): for each second of the run a row
// per server and a row "all": its mean running and queued calls, booked
// utilization and measured cpu_util over that second (from the samples,
// interpolated between them; empty where no samples bracket the second),
// and the calls that ended in it: how many, how many failed, their GF and MB.
std::string SeriesCsvHeader();
std::string SeriesCsv(const std::vector<CallRow> &rows,
                      const std::map<std::string, std::vector<ServerSample>> &samples,
                      double seconds);

// One machine-readable line per run, for plots (loadtest/plot.py).
std::string SummaryCsvHeader();
std::string SummaryCsvRow(const std::string &label, const std::string &workload,
                          const std::string &sizes, int clients, const Summary &s);

}  // namespace ninf::loadtest
