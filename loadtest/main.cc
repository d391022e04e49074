// ninf-loadtest: multi-client Linpack / EP load tests in the seed paper's
// model (docs/loadtest.md). Thin: options, Run, the outputs.
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "loadtest/report.h"
#include "loadtest/run.h"

using namespace ninf::loadtest;

namespace {

bool FileHasContent(const std::string &path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && st.st_size > 0;
}

// Appends `row` to `path`, writing `header` first into a new or empty file.
bool AppendWithHeader(const std::string &path, const std::string &header, const std::string &row) {
  const bool fresh = !FileHasContent(path);
  std::FILE *f = std::fopen(path.c_str(), "a");
  if (!f) return false;
  if (fresh) std::fputs(header.c_str(), f);
  std::fputs(row.c_str(), f);
  return std::fclose(f) == 0;
}

// The command line: the run's configuration and what to write where.
struct Options {
  RunConfig c;
  std::string workload = "linpack", csv_path, table_path, summary_path, label, series_path;
  std::string phase = "random";
  bool quiet = false;
};

// Where the calls go and whose statistics are sampled.
void AddTargetOptions(CLI::App &app, RunConfig &c) {
  app.add_option("--server", c.servers,
                 "a server host:port (repeat for several: client i calls "
                 "server i mod count)")
      ->type_name("HOST:PORT");
  app.add_option("--metaserver", c.metaserver, "place every call through ninf-meta at HOST:PORT")
      ->type_name("HOST:PORT");
  app.add_option("--sample", c.sampled,
                 "a server whose statistics are sampled (default: the --server list)")
      ->type_name("HOST:PORT");
  app.add_option("--key-file", c.key_file,
                 "key file of servers that need one, for the calls and the statistics "
                 "(default: NINF_KEY_FILE)");
  app.add_option("--server-cgroup", c.server_cgroups,
                 "the control group a sampled server runs in (repeat: one per server in order, "
                 "or one for all): its CPU time is the measured cpu_util. cgroup v2: the "
                 "group's directory (cpu.stat); v1: its cpuacct directory (cpuacct.usage)")
      ->type_name("DIR");
  app.add_option("--server-cpus", c.server_cpus,
                 "CPUs of the --server-cgroup groups (default: from their cpuset)")
      ->check(CLI::Range(1, 65536));
  app.add_option("--netns", c.netns,
                 "run client i in network namespace NETNS[i mod count], over TCP (repeat for "
                 "several; ninf-sites netns NAME SITE names a site's)")
      ->type_name("NETNS");
}

// What each client calls, how often and for how long.
void AddWorkloadOptions(CLI::App &app, Options *o) {
  RunConfig &c = o->c;
  std::string &workload = o->workload, &phase = o->phase;
  app.add_option("--workload", workload,
                 "linpack (dgesv: A's factors and x come back), linpack-x (the standard "
                 "library's linpack, the Ninf paper's call: only x comes back) or ep")
      ->check(CLI::IsMember({"linpack", "linpack-x", "ep"}));
  app.add_option("--size", c.sizes,
                 "n of linpack (dgesv n x n), m of ep (2^m pairs); several (200,1500) mix "
                 "job sizes, each call picks one")
      ->delimiter(',')
      ->check(CLI::Range(1, 20000));
  app.add_option("--mix", c.mix, "weights of the sizes (default: equal), e.g. 3,1")
      ->delimiter(',')
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--clients,-c", c.clients, "client processes")->check(CLI::Range(1, 1024));
  app.add_option("--interval,-s", c.interval, "seconds between a client's ticks (0: closed loop)")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--probability,-p", c.probability, "chance of a call at each tick")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--phase", phase,
                 "random: each client's first tick at a uniform offset in [0, interval) from "
                 "its seeded generator; aligned: all clients tick together (bursts)")
      ->check(CLI::IsMember({"random", "aligned"}));
  app.add_option("--duration", c.duration, "seconds of ticks (0: --steps decides)")
      ->check(CLI::Range(0.0, 86400.0));
  app.add_option("--steps", c.steps, "ticks per client (0: --duration decides)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--sample-ms", c.sample_ms,
                 "mean statistics sampling period (each drawn from 0.5 to 1.5 times it)")
      ->check(CLI::Range(50, 60000));
}

// What is written where.
void AddOutputOptions(CLI::App &app, Options *o) {
  app.add_option("--csv", o->csv_path, "write one row per call here");
  app.add_option("--table", o->table_path, "append the run's Markdown row here (header if new)");
  app.add_option("--summary", o->summary_path, "append the run's summary CSV row here (for plots)");
  app.add_option("--label", o->label, "the run's name in the table (default: the workload)");
  app.add_option("--series", o->series_path,
                 "write a per-second time series CSV here (per server and all: running, queued, "
                 "utilization, cpu_util, calls, failed, GF/s, MB/s)");
  app.add_flag("--fail-fast", o->c.fail_fast,
               "stop the run at the first failed call, print its error, exit 1");
  app.add_flag("--quiet,-q", o->quiet, "no progress line");
}

void AddOptions(CLI::App &app, Options *o) {
  AddTargetOptions(app, o->c);
  AddWorkloadOptions(app, o);
  AddOutputOptions(app, o);
}

// Checks and completes the options; 0, or the exit status of a bad one.
int Settle(const CLI::App &app, Options *o) {
  RunConfig &c = o->c;
  if (c.servers.empty() == c.metaserver.empty()) {
    std::fprintf(stderr, "ninf-loadtest: give --server (one or more) or --metaserver\n");
    return 2;
  }
  // --steps alone means every step: the default duration applies only
  // when no number of steps is given.
  if (c.steps > 0 && app.count("--duration") == 0) c.duration = 0;
  if (c.duration <= 0 && c.steps <= 0) {
    std::fprintf(stderr, "ninf-loadtest: give a --duration or a number of --steps\n");
    return 2;
  }
  if (!c.mix.empty() && c.mix.size() != c.sizes.size()) {
    std::fprintf(stderr, "ninf-loadtest: --mix needs one weight per --size\n");
    return 2;
  }
  if (!c.mix.empty() && *std::max_element(c.mix.begin(), c.mix.end()) <= 0) {
    std::fprintf(stderr, "ninf-loadtest: --mix needs a weight above 0\n");
    return 2;
  }
  (void)ParseWorkload(o->workload, &c.workload);
  c.phase = o->phase == "aligned" ? RunConfig::Phase::kAligned : RunConfig::Phase::kRandom;
  if (c.sampled.empty()) c.sampled = c.servers;
  // One key setting for the calls and the statistics: --key-file reaches the
  // clients' libninf through NINF_KEY_FILE (inherited by the client
  // processes), and NINF_KEY_FILE alone serves the statistics queries too.
  if (!c.key_file.empty())
    ::setenv("NINF_KEY_FILE", c.key_file.c_str(), 1);
  else if (const char *env = std::getenv("NINF_KEY_FILE"))
    c.key_file = env;
  // The clients' TLS variables reach libninf the same way; the queries
  // read them here.
  for (auto [name, field] :
       {std::pair{"NINF_TLS_CA", &c.tls_ca}, std::pair{"NINF_TLS_CERT", &c.tls_cert},
        std::pair{"NINF_TLS_KEY", &c.tls_key}})
    if (const char *env = std::getenv(name)) *field = env;
  c.progress = !o->quiet;
  if (o->label.empty()) o->label = o->workload;

  return 0;
}

// Runs the load test, its calls' rows into --csv; 0, or 2 if it could not
// start.
int RunTo(const Options &o, RunResult *result) {
  std::FILE *csv = nullptr;
  if (!o.csv_path.empty()) {
    csv = std::fopen(o.csv_path.c_str(), "w");
    if (!csv) {
      std::perror(("ninf-loadtest: " + o.csv_path).c_str());
      return 2;
    }
    std::fprintf(csv, "%s\n", CsvHeader().c_str());
  }
  std::string error;
  const bool started = Run(o.c, csv, result, &error);
  if (csv) std::fclose(csv);
  if (!started) {
    std::fprintf(stderr, "ninf-loadtest: %s\n", error.c_str());
    return 2;
  }
  return 0;
}

// The Markdown row (and the size and server tables when there are several)
// and the tool's own CPU time, on standard output.
void PrintReport(const RunConfig &c, const RunResult &result, const Summary &s,
                 const std::string &row) {
  std::printf("%s%s", MarkdownHeader().c_str(), row.c_str());
  if (s.by_size.size() > 1) std::printf("\n%s\n", SizeTable(s).c_str());
  if (c.netns.size() > 1) std::printf("\n%s\n", SiteTable(result.rows, c.netns, c.clients).c_str());
  std::set<std::string> servers;
  for (const auto &entry : s.by_server) servers.insert(entry.first);
  for (const auto &entry : result.samples) servers.insert(entry.first);
  if (servers.size() > 1) std::printf("\n%s\n", ServerTable(s).c_str());
  const double wall = std::max(1e-9, result.wall_seconds);
  std::printf(
      "tool CPU: collector %.3f s (%.2f%% of a core), clients %.2f s (%.1f%%: their "
      "argument data, answer checks and client library) in %.1f s\n",
      result.collector_cpu_seconds, 100.0 * result.collector_cpu_seconds / wall,
      result.clients_cpu_seconds, 100.0 * result.clients_cpu_seconds / wall, result.wall_seconds);
}

// --table, --summary and --series.
void WriteOutputs(const Options &o, const RunResult &result, const Summary &s,
                  const std::string &row) {
  const std::string sizes = SizesText(o.c.sizes);
  if (!o.table_path.empty() && !AppendWithHeader(o.table_path, MarkdownHeader(), row))
    std::perror(("ninf-loadtest: " + o.table_path).c_str());
  if (!o.summary_path.empty() &&
      !AppendWithHeader(o.summary_path, SummaryCsvHeader(),
                        SummaryCsvRow(o.label, o.workload, sizes, o.c.clients, s)))
    std::perror(("ninf-loadtest: " + o.summary_path).c_str());
  if (!o.series_path.empty()) {
    std::FILE *f = std::fopen(o.series_path.c_str(), "w");
    if (!f ||
        std::fputs(SeriesCsv(result.rows, result.samples, result.wall_seconds).c_str(), f) < 0 ||
        std::fclose(f) != 0)
      std::perror(("ninf-loadtest: " + o.series_path).c_str());
  }
}

// What failed, on standard error: unreachable servers one line each (not
// one per call), the first five other failures, abnormal client ends.
void ReportFailures(const RunResult &result) {
  std::map<std::string, int> unreachable;
  for (const CallRow &r : result.rows)
    if (r.outcome == "unreachable") ++unreachable[r.server];
  for (const auto &[server, n] : unreachable)
    std::fprintf(stderr, "ninf-loadtest: server %s unreachable: %d call(s) could not connect\n",
                 server.c_str(), n);
  int shown = 0;
  for (const CallRow &r : result.rows)
    if (r.outcome != "ok" && r.outcome != "unreachable" && shown++ < 5)
      std::fprintf(stderr, "ninf-loadtest: client %d step %d: %s: %s\n", r.client, r.step,
                   r.outcome.c_str(), r.detail.c_str());
  if (result.client_failures > 0)
    std::fprintf(stderr, "ninf-loadtest: %d client process(es) ended abnormally\n",
                 result.client_failures);
}

}  // namespace

int main(int argc, char **argv) {
  CLI::App app(
      "ninf-loadtest: c client processes call Linpack (dgesv or linpack) or NAS EP on one server, "
      "a list "
      "of servers or through the metaserver, in the Ninf load-test model: every --interval "
      "seconds each client calls with --probability, for --duration seconds or --steps ticks. "
      "Every answer is checked. Writes one CSV row per call, a Markdown table row in the form "
      "of the Ninf paper's tables, and samples each server's utilization and load. Exit status "
      "1 if any call failed.",
      "ninf-loadtest");
  Options o;
  AddOptions(app, &o);
  CLI11_PARSE(app, argc, argv);
  if (int status = Settle(app, &o)) return status;
  RunResult result;
  if (int status = RunTo(o, &result)) return status;
  const Summary s = Summarize(result.rows, result.samples);
  // A run stopped by a signal reports what it has, marked as such.
  const std::string label = o.label + (result.interrupted_by ? " (interrupted)" : "");
  const std::string row = MarkdownRow(label, o.workload, SizesText(o.c.sizes), o.c.clients, s);
  PrintReport(o.c, result, s, row);
  WriteOutputs(o, result, s, row);
  ReportFailures(result);
  if (result.interrupted_by) {
    std::fprintf(stderr,
                 "ninf-loadtest: interrupted by %s at %.1f s: the tables cover the %zu calls that "
                 "ended; %d call(s) under way were abandoned\n",
                 strsignal(result.interrupted_by), result.interrupted_at, result.rows.size(),
                 result.abandoned);
    return 128 + result.interrupted_by;  // as a shell reports a process the signal ended
  }
  return s.failed > 0 || result.client_failures > 0 ? 1 : 0;
}
