// A load-test run: c client processes following the seed paper's client
// model (004, 4.1: every `interval` seconds a client calls with probability
// `probability`; a call that outlasts the interval is followed at once by
// the next tick), for `duration` seconds or `steps` ticks, while the parent
// samples every server's statistics and collects the clients' records.
//
// Clients are processes, not threads, like the seed's (and like real users:
// each has its own libninf, connections and interface cache). Each writes
// one CSV line per call into a pipe (one write(2) below PIPE_BUF, so lines
// never interleave); the parent reads them as they come. With network
// namespaces, a client enters its own after the fork; the parent (the
// sampling) stays where it was started.
#pragma once

#include <string>
#include <vector>

#include "loadtest/report.h"
#include "loadtest/workload.h"

namespace ninf::loadtest {

struct RunConfig {
  std::vector<std::string> servers;  // host:port; client i calls servers[i % size]
  std::string metaserver;            // host:port: calls are placed instead
  std::vector<std::string> sampled;  // servers whose statistics are sampled
  std::string key_file;              // for the statistics queries
  // The clients' TLS files (NINF_TLS_CA, NINF_TLS_CERT, NINF_TLS_KEY): the
  // statistics queries speak TLS with them as the calls do.
  std::string tls_ca, tls_cert, tls_key;
  // Control groups of the sampled servers (one per server in order, or one
  // for all) whose CPU time is the measured utilization (loadtest/cgroup.h);
  // server_cpus > 0 gives their CPU count instead of the cpuset.
  std::vector<std::string> server_cgroups;
  int server_cpus = 0;
  // Network namespaces (names under /run/netns or paths): client i runs in
  // netns[i % size], over TCP (ninf-sites; docs/loadtest.md, "Sites").
  std::vector<std::string> netns;
  WorkloadKind workload = WorkloadKind::kLinpack;
  // n of linpack or m of ep; with several, each call picks one with the
  // weights `mix` (equal when empty) from the client's seeded generator, so
  // that runs with the same clients and steps make the same calls.
  std::vector<int> sizes{600};
  std::vector<double> mix;
  int clients = 1;
  double interval = 0;  // seconds between a client's ticks (0: closed loop)
  // Random: client i's first tick is at a uniform offset in [0, interval)
  // from its own seeded generator, so c clients do not call in bursts of
  // Binomial(c, p) at the same instants; aligned: every first tick at once.
  enum class Phase { kRandom, kAligned } phase = Phase::kRandom;
  double probability = 1;
  double duration = 10;  // seconds (0: use steps)
  int steps = 0;         // ticks per client (0: use duration)
  int sample_ms = 500;
  bool progress = true;
  bool fail_fast = false;  // stop the run at the first failed call
};

struct RunResult {
  std::vector<CallRow> rows;
  std::map<std::string, std::vector<ServerSample>> samples;
  int client_failures = 0;           // clients that exited abnormally
  double collector_cpu_seconds = 0;  // the parent's: sampling, collecting, progress
  double clients_cpu_seconds = 0;    // the client processes', their data and checks included
  double wall_seconds = 0;
  bool stopped_at_failure = false;  // --fail-fast stopped the run
  // A stop signal (SIGINT, SIGTERM) ended the run early: which, when (s
  // after the start), and how many clients were killed in a call they had
  // not finished (kStopGraceSeconds later, or at a second signal).
  int interrupted_by = 0;
  double interrupted_at = 0;
  int abandoned = 0;
};

// After a stop signal the clients issue no more calls; one still in a call
// this long after it is killed, its call abandoned (the server cancels it
// when the connection closes). A second signal kills them at once.
inline constexpr double kStopGraceSeconds = 5;

// Runs the test; each row is also appended to `csv` as it arrives (when not
// null). Returns false, with a message, when it could not start: a control
// group, a namespace or a server that does not answer (nothing was run).
bool Run(const RunConfig &config, std::FILE *csv, RunResult *result, std::string *error);

// Where client `index`'s first tick lies after the run's start: 0 when
// aligned or in a closed loop, else uniform in [0, interval) from a
// generator seeded by the index alone (the same phases in every run).
double FirstTickOffset(RunConfig::Phase phase, double interval, int index);

// Parses a `name:value` statistics reply into a sample taken at `at`.
ServerSample ParseSample(const std::string &stats_text, double at);

}  // namespace ninf::loadtest
