#include "client/transaction_plan.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ninf::client {
namespace {

// One slot of a server: its planned busy intervals, sorted by start.
struct Slot {
  int server = 0;
  double ready = 0;
  std::vector<std::pair<double, double>> busy;

  // The earliest start >= `after` where `length` fits (insertion policy).
  double EarliestStart(double after, double length) const {
    double t = std::max(after, ready);
    for (auto [s, f] : busy) {
      if (t + length <= s) return t;
      t = std::max(t, f);
    }
    return t;
  }
  void Book(double s, double f) {
    busy.insert(std::upper_bound(busy.begin(), busy.end(), std::make_pair(s, f)), {s, f});
  }
};

double MeanDuration(const PlanProblem &p, int task) {
  double sum = 0;
  int n = 0;
  for (int s = 0; s < p.server_count(); ++s) {
    double d = p.Duration(task, s);
    if (std::isfinite(d)) sum += d, ++n;
  }
  return n ? sum / n : 0;
}

// The edge's mean transfer between distinct servers, as the paper's c-bar.
double MeanTransfer(const PlanProblem &p, const PlanEdge &e) {
  const int S = p.server_count();
  if (S < 2) return 0;
  double sum = 0;
  for (int a = 0; a < S; ++a)
    for (int b = 0; b < S; ++b)
      if (a != b) sum += p.Transfer(e, a, b);
  return sum / (S * (S - 1));
}

std::vector<double> UpwardRanks(const PlanProblem &p) {
  const int n = static_cast<int>(p.tasks.size());
  std::vector<double> rank(static_cast<std::size_t>(n), 0);
  // Edges go from lower to higher index (program order), so one backward
  // pass sees every successor's rank before its predecessors.
  for (int t = n - 1; t >= 0; --t) {
    double best = 0;
    for (const PlanEdge &e : p.edges)
      if (e.from == t) best = std::max(best, MeanTransfer(p, e) + rank[e.to]);
    rank[t] = MeanDuration(p, t) + best;
  }
  return rank;
}

}  // namespace

double PlanProblem::Duration(int task, int server) const {
  const PlanTask &t = tasks[static_cast<std::size_t>(task)];
  const double compute = t.compute_seconds[static_cast<std::size_t>(server)];
  if (!std::isfinite(compute)) return kCannotRun;
  const auto node = static_cast<std::size_t>(server + 1);
  return links[0][node].Seconds(t.client_in_bytes) + compute +
         links[node][0].Seconds(t.client_out_bytes);
}

double PlanProblem::Transfer(const PlanEdge &e, int a, int b) const {
  if (a == b) return 0;
  return links[static_cast<std::size_t>(a + 1)][static_cast<std::size_t>(b + 1)].Seconds(e.bytes);
}

Plan PlanHeft(const PlanProblem &p) {
  const int n = static_cast<int>(p.tasks.size());
  Plan plan;
  plan.server.assign(static_cast<std::size_t>(n), -1);
  plan.start.assign(static_cast<std::size_t>(n), 0);
  plan.finish.assign(static_cast<std::size_t>(n), 0);
  plan.rank = UpwardRanks(p);
  plan.order.resize(static_cast<std::size_t>(n));
  std::iota(plan.order.begin(), plan.order.end(), 0);
  // Ranks equal but for rounding count as ties, which keep program order.
  std::stable_sort(plan.order.begin(), plan.order.end(), [&](int a, int b) {
    return plan.rank[a] > plan.rank[b] + 1e-9 * std::max(1.0, std::abs(plan.rank[b]));
  });
  std::vector<Slot> slots;
  for (int s = 0; s < p.server_count(); ++s)
    for (int k = 0; k < std::max(1, p.servers[s].slots); ++k)
      slots.push_back({s, p.servers[s].ready_seconds, {}});
  for (int t : plan.order) {
    double best_finish = kCannotRun, best_start = 0;
    int best_slot = -1;
    for (int k = 0; k < static_cast<int>(slots.size()); ++k) {
      const int s = slots[k].server;
      const double length = p.Duration(t, s);
      if (!std::isfinite(length)) continue;
      double after = 0;
      for (const PlanEdge &e : p.edges)
        if (e.to == t)
          after = std::max(after, plan.finish[e.from] + p.Transfer(e, plan.server[e.from], s));
      const double start = slots[k].EarliestStart(after, length);
      if (start + length < best_finish)
        best_finish = start + length, best_start = start, best_slot = k;
    }
    if (best_slot < 0) return plan;  // ok stays false
    slots[best_slot].Book(best_start, best_finish);
    plan.server[t] = slots[best_slot].server;
    plan.start[t] = best_start;
    plan.finish[t] = best_finish;
    plan.makespan = std::max(plan.makespan, best_finish);
  }
  plan.ok = true;
  return plan;
}

int RecheckServer(const std::vector<double> &finish_now, int planned, double margin) {
  if (finish_now.empty()) return planned;
  const auto best = std::min_element(finish_now.begin(), finish_now.end()) - finish_now.begin();
  if (planned < 0 || planned >= static_cast<int>(finish_now.size()) ||
      !std::isfinite(finish_now[planned]))
    return static_cast<int>(best);
  const double keep = finish_now[planned];
  return finish_now[best] < keep - margin * keep ? static_cast<int>(best) : planned;
}

}  // namespace ninf::client
