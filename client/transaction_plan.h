// Planning a transaction block: HEFT (Topcuoglu, Hariri and Wu, IEEE TPDS
// 13(3), 2002) over the block's graph, with the metaserver's predictions of
// compute time, queue wait and per-pair links. Pure functions, no sockets;
// tests/client/transaction_plan_test.cc reproduces the paper's worked
// example (makespan 80).
//
//   rank_u(n) = mean_w(n) + max over successors s of (mean_c(n, s) + rank_u(s))
//   tasks in decreasing rank; each to the slot of the server where it
//   finishes first:
//   EFT(n, p) = duration(n, p) + earliest gap on p of that length after
//               max(ready(p), max over predecessors m of AFT(m) + c(m, n))
//   c(m, n)   = 0 on the same server, else latency + bytes / bandwidth
//
// Node 0 of the network is the client; servers are nodes 1..S. A task's
// own transfers to and from the client are part of its duration on a
// server, because ninfd holds the call's slot while they run.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace ninf::client {

inline constexpr double kCannotRun = std::numeric_limits<double>::infinity();

struct PlanLink {
  double latency_seconds = 0;
  double bytes_per_second = 1;  // > 0
  double Seconds(uint64_t bytes) const {
    return bytes == 0 ? 0 : latency_seconds + static_cast<double>(bytes) / bytes_per_second;
  }
};

struct PlanServer {
  int slots = 1;             // calls it runs at once (>= 1)
  double ready_seconds = 0;  // when its queue lets a new call start
};

struct PlanTask {
  // Per server: seconds in the routine (kCannotRun where it is not served).
  std::vector<double> compute_seconds;
  uint64_t client_in_bytes = 0;   // read from the client's memory
  uint64_t client_out_bytes = 0;  // final values back to the client
};

struct PlanEdge {
  int from = 0, to = 0;  // task indices, from < to
  uint64_t bytes = 0;    // moved between the two (0: order only)
};

struct PlanProblem {
  std::vector<PlanServer> servers;
  // links[a][b] for nodes a, b in 0..S (0: the client). Only a != b is read.
  std::vector<std::vector<PlanLink>> links;
  std::vector<PlanTask> tasks;
  std::vector<PlanEdge> edges;

  int server_count() const { return static_cast<int>(servers.size()); }
  // Seconds task t holds a slot on server s: its inputs from the client, the
  // routine, its final values back.
  double Duration(int task, int server) const;
  // Seconds to move an edge's bytes from server a to server b (0 if a == b).
  double Transfer(const PlanEdge &e, int a, int b) const;
};

struct Plan {
  std::vector<int> server;     // per task: 0..S-1
  std::vector<double> start;   // per task, planned
  std::vector<double> finish;  // per task, planned (AFT)
  std::vector<int> order;      // tasks in decreasing upward rank
  std::vector<double> rank;    // per task: rank_u
  double makespan = 0;
  bool ok = false;  // false: a task no server can run
};

// The whole block placed at once. Ties in rank keep program order; ties in
// finish time take the lower server index.
Plan PlanHeft(const PlanProblem &problem);

// Dynamic re-check when a call becomes ready: finish times predicted now on
// each server; the planned server keeps the call unless another finishes
// earlier by more than `margin` (a fraction) of the planned finish. Returns
// the server to use.
int RecheckServer(const std::vector<double> &finish_now, int planned, double margin);

}  // namespace ninf::client
