// Where a call runs: ninf-meta's placement policy, all of it. Pure functions
// over a snapshot of what the metaserver believes (servers' load, links
// between client sites and servers, per-function speeds), without sockets,
// clocks or libuv, so every decision is unit-tested on its own
// (tests/metaserver/placement_test.cc) and timed on synthetic servers
// (bench/bench_placement.cc).
//
// The default policy predicts each candidate's completion time and takes
// the minimum (seed paper 004: for communication-heavy calls over wide-area
// links, placement by load alone fails, bandwidth decides):
//
//   completion = queue wait                  outstanding work / slots, 0 with a free slot
//              + latency                     one round trip of the (site, server) link
//              + in_bytes / bandwidth        the arguments
//              + work / speed                IDL CalcOrder / measured speed for the function
//                                            (or the function's mean service time there)
//              + startup                     starting the executable, when none is warm
//              + out_bytes / bandwidth       the results
//
// A server behind a relay pays the extra hop: one more round trip of the
// relay leg (the relay asks the server to dial back before the call can
// start) and, unless the link was measured through the relay, transfers at
// the slower of the two legs (RelayedLink).
//
// The other policies are the baselines of the experiments: `load` (least
// loaded only, what the seed shows failing), `round-robin`, `random`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string_view>
#include <vector>

namespace ninf::meta {

enum class Policy { kCompletion, kLoad, kRoundRobin, kRandom };

// "completion", "load", "round-robin", "random"; nothing for anything else.
std::optional<Policy> ParsePolicy(std::string_view name);
std::string_view PolicyName(Policy policy);

// One server's load as the metaserver sees it: its last report plus the
// work it was assigned since (reserved at assignment, so that decisions made
// before the next report do not pile onto one server).
struct ServerLoad {
  int slots = 1;            // calls it runs at once (>= 1)
  int running = 0;          // calls running at the last report
  int queued = 0;           // calls waiting in its queue at the last report
  double work_seconds = 0;  // predicted seconds of work running and queued there
  int reserved_calls = 0;   // assigned since the last report
  double reserved_seconds = 0;
};

// The link between the client's site and one server: what the forecaster
// predicts for a round trip and for bulk throughput.
struct Link {
  double latency_seconds = 0;
  double bandwidth_bytes_per_second = 0;  // > 0
};

// One server able to run the function asked for, with what the metaserver
// knows about that function there.
struct Candidate {
  uint32_t server = 0;  // the caller's index; returned by Rank
  ServerLoad load;
  Link link;                    // from the client's site
  double flops_per_second = 0;  // measured speed for this function; 0: unknown
  double service_seconds = 0;   // mean service time of the function there; 0: unknown
  double startup_seconds = 0;   // starting an executable when none is idle
  bool warm = false;            // an idle executable of the function is waiting
  // A reverse server, reached through a relay ("name@relay:port",
  // docs/relay.md): `relay_leg` is the relay <-> server hop, which `link`
  // (client site <-> relay) does not cover when it was never measured.
  bool relayed = false;
  Link relay_leg;  // bandwidth 0: already inside a measured `link`
};

// What the call itself costs: CalcOrder evaluated on its IN scalars (0 when
// the IDL gives none) and the bytes of its arguments and results.
struct CallShape {
  double work_flops = 0;
  uint64_t in_bytes = 0;
  uint64_t out_bytes = 0;
};

// The parts of a predicted completion time, in seconds.
struct Prediction {
  double queue = 0, latency = 0, send = 0, compute = 0, startup = 0, receive = 0;
  double total() const { return queue + latency + send + compute + startup + receive; }
};

Prediction Predict(const Candidate &c, const CallShape &call);

// The client's path to candidate `c`: `c.link`, or for a relayed server
// the two legs in series (latencies added, the smaller bandwidth).
Link RelayedLink(const Candidate &c);

// Calls at the server per slot, reservations included: the `load` policy's
// figure (lower is less loaded).
double LoadFigure(const ServerLoad &load);

// State that policies keep between decisions: the round-robin position and
// the random generator. One per metaserver (or per test).
struct PolicyState {
  uint64_t next_round_robin = 0;
  std::mt19937_64 random{0x6e696e66};  // fixed seed: experiments repeat
};

// The candidates' `server` indices, best first, at most `limit` of them
// (the first is where the call goes; the next ones are where it is retried
// if that server fails before any result byte). Ties keep candidate order.
// Empty when there are no candidates. Cost: one pass over the candidates
// plus a partial sort of `limit` of them.
std::vector<uint32_t> Rank(Policy policy, std::span<const Candidate> candidates,
                           const CallShape &call, std::size_t limit, PolicyState *state);

// A transaction block's plan chose `planned` (a candidate index): it goes
// first unless the best of `ranked` completes earlier by more than `margin`
// of the planned server's predicted time (dynamic re-check: move a planned
// call only for a clear gain). The rest keep their order, without repeats.
std::vector<uint32_t> PreferPlanned(std::vector<uint32_t> ranked,
                                    std::span<const Candidate> candidates, const CallShape &call,
                                    uint32_t planned, double margin);

// Reconciliation: an assignment reserves its predicted compute on the server
// until the server's next report covers it.
void Reserve(ServerLoad *load, double seconds);

}  // namespace ninf::meta
