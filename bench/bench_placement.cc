// bench_placement.cc - how long ninf-meta takes to place one call, against
// 10, 100, 1,000 and 10,000 synthetic servers (metaserver/placement.h).
//
//     bench_placement [--decisions N] [--max-servers N]
//
// Every server serves the function; loads, links (1 Mbit/s to 10 Gbit/s,
// 0.1-50 ms), speeds and warm executables are drawn at random with a fixed
// seed. Each decision ranks the candidates (the best and two for retries)
// and reserves the predicted work on the chosen server, as the daemon does;
// the candidates are re-drawn every 1,000 decisions as reports would change
// them. The baseline of the same run is a bare scan of the candidates for
// the smallest of one field, the least any placement over them can cost.
// Prints per server count and policy:
//   placement servers=.. policy=.. decisions=.. p50_us=.. p99_us=.. scan_p50_us=..
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "metaserver/placement.h"

using namespace ninf::meta;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<Candidate> DrawServers(std::size_t n, std::mt19937_64 &rng) {
  std::uniform_int_distribution<int> slots(1, 64);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<Candidate> servers(n);
  for (std::size_t i = 0; i < n; ++i) {
    Candidate &c = servers[i];
    c.server = static_cast<uint32_t>(i);
    c.load.slots = slots(rng);
    c.load.running = static_cast<int>(unit(rng) * (c.load.slots + 1));
    c.load.queued = unit(rng) < 0.3 ? static_cast<int>(unit(rng) * 8) : 0;
    c.load.work_seconds = unit(rng) * 30;
    c.link.latency_seconds = 1e-4 + unit(rng) * 0.05;
    c.link.bandwidth_bytes_per_second = 125e3 * std::pow(10.0, unit(rng) * 4);  // 1 Mbit .. 10 Gbit
    c.flops_per_second = 1e9 + unit(rng) * 1e11;
    c.service_seconds = unit(rng);
    c.startup_seconds = 0.002 + unit(rng) * 0.01;
    c.warm = unit(rng) < 0.5;
  }
  return servers;
}

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// The baseline: the smallest work figure over the candidates.
volatile uint32_t g_sink;
double BareScan(const std::vector<Candidate> &servers) {
  const auto start = Clock::now();
  uint32_t best = 0;
  double best_work = servers[0].load.work_seconds;
  for (const Candidate &c : servers)
    if (c.load.work_seconds < best_work) {
      best_work = c.load.work_seconds;
      best = c.server;
    }
  g_sink = best;
  return Micros(Clock::now() - start);
}

}  // namespace

int main(int argc, char **argv) {
  int decisions = 20000;
  std::size_t max_servers = 10000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--decisions") == 0 && i + 1 < argc) {
      decisions = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--max-servers") == 0 && i + 1 < argc) {
      max_servers = static_cast<std::size_t>(std::atol(argv[++i]));
    } else {
      decisions = 0;
    }
  }
  if (decisions < 100 || max_servers < 10) {
    std::fprintf(stderr, "usage: %s [--decisions N (>= 100)] [--max-servers N (>= 10)]\n", argv[0]);
    return 2;
  }
  const CallShape call{2.0 / 3.0 * 2000.0 * 2000.0 * 2000.0, 32'016'000, 32'016'000};
  for (std::size_t n = 10; n <= max_servers; n *= 10) {
    for (Policy policy :
         {Policy::kCompletion, Policy::kLoad, Policy::kRoundRobin, Policy::kRandom}) {
      std::mt19937_64 rng(n);
      PolicyState state;
      std::vector<Candidate> servers;
      std::vector<double> times, scans;
      times.reserve(decisions);
      scans.reserve(decisions);
      for (int d = 0; d < decisions; ++d) {
        if (d % 1000 == 0) servers = DrawServers(n, rng);
        const auto start = Clock::now();
        std::vector<uint32_t> ranked = Rank(policy, servers, call, 3, &state);
        Candidate &chosen = servers[ranked.front()];
        Reserve(&chosen.load, Predict(chosen, call).compute);
        times.push_back(Micros(Clock::now() - start));
        scans.push_back(BareScan(servers));
      }
      std::printf(
          "placement servers=%zu policy=%s decisions=%d p50_us=%.2f p99_us=%.2f "
          "scan_p50_us=%.2f\n",
          n, std::string(PolicyName(policy)).c_str(), decisions,
          bench_percentile(times.data(), decisions, 0.5),
          bench_percentile(times.data(), decisions, 0.99),
          bench_percentile(scans.data(), decisions, 0.5));
      std::fflush(stdout);
    }
  }
  return 0;
}
