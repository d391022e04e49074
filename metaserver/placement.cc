#include "metaserver/placement.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

namespace ninf::meta {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

struct PolicyNameEntry {
  Policy policy;
  std::string_view name;
};
constexpr PolicyNameEntry kPolicyNames[] = {
    {Policy::kCompletion, "completion"},
    {Policy::kLoad, "load"},
    {Policy::kRoundRobin, "round-robin"},
    {Policy::kRandom, "random"},
};

// Seconds to move `bytes` over `link`; never when the link has no bandwidth.
double TransferSeconds(uint64_t bytes, const Link &link) {
  if (bytes == 0) return 0;
  if (!(link.bandwidth_bytes_per_second > 0)) return kNever;
  return static_cast<double>(bytes) / link.bandwidth_bytes_per_second;
}

// The `limit` smallest keys, in order (ties: the earlier candidate first),
// by one pass that keeps the best so far in a short sorted list: no
// allocation beyond the result, and n x limit comparisons at worst, which
// for the few places a call may be retried is less than sorting.
template <typename KeyOf>
std::vector<uint32_t> SmallestKeys(std::span<const Candidate> candidates, std::size_t limit,
                                   KeyOf key_of) {
  limit = std::min(limit, candidates.size());
  std::vector<std::pair<double, std::size_t>> best;  // (key, position), sorted
  best.reserve(limit + 1);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const double key = key_of(candidates[i]);
    if (best.size() == limit && !(key < best.back().first)) continue;
    auto at = std::upper_bound(best.begin(), best.end(), key,
                               [](double k, const auto &entry) { return k < entry.first; });
    best.insert(at, {key, i});
    if (best.size() > limit) best.pop_back();
  }
  std::vector<uint32_t> servers;
  servers.reserve(best.size());
  for (const auto &[key, position] : best) servers.push_back(candidates[position].server);
  return servers;
}

}  // namespace

std::optional<Policy> ParsePolicy(std::string_view name) {
  for (const PolicyNameEntry &e : kPolicyNames)
    if (e.name == name) return e.policy;
  return std::nullopt;
}

std::string_view PolicyName(Policy policy) {
  for (const PolicyNameEntry &e : kPolicyNames)
    if (e.policy == policy) return e.name;
  return "?";
}

Link RelayedLink(const Candidate &c) {
  if (!c.relayed) return c.link;
  Link path = c.link;
  path.latency_seconds =
      std::max(0.0, c.link.latency_seconds) + std::max(0.0, c.relay_leg.latency_seconds);
  if (c.relay_leg.bandwidth_bytes_per_second > 0)
    path.bandwidth_bytes_per_second =
        std::min(c.link.bandwidth_bytes_per_second, c.relay_leg.bandwidth_bytes_per_second);
  return path;
}

Prediction Predict(const Candidate &c, const CallShape &call) {
  Prediction p;
  const ServerLoad &load = c.load;
  const int slots = std::max(1, load.slots);
  const int busy = load.running + load.queued + load.reserved_calls;
  // A free slot starts the call at once; otherwise it waits for its share
  // of everything ahead of it, spread over the slots.
  if (busy >= slots) p.queue = std::max(0.0, load.work_seconds + load.reserved_seconds) / slots;
  const Link path = RelayedLink(c);
  p.latency = std::max(0.0, path.latency_seconds);
  p.send = TransferSeconds(call.in_bytes, path);
  p.receive = TransferSeconds(call.out_bytes, path);
  if (call.work_flops > 0 && c.flops_per_second > 0) {
    p.compute = call.work_flops / c.flops_per_second;
  } else {
    p.compute = std::max(0.0, c.service_seconds);
  }
  p.startup = c.warm ? 0 : std::max(0.0, c.startup_seconds);
  return p;
}

double LoadFigure(const ServerLoad &load) {
  return static_cast<double>(load.running + load.queued + load.reserved_calls) /
         std::max(1, load.slots);
}

std::vector<uint32_t> Rank(Policy policy, std::span<const Candidate> candidates,
                           const CallShape &call, std::size_t limit, PolicyState *state) {
  if (candidates.empty() || limit == 0) return {};
  const std::size_t n = candidates.size();
  switch (policy) {
    case Policy::kCompletion:
      return SmallestKeys(candidates, limit,
                          [&call](const Candidate &c) { return Predict(c, call).total(); });
    case Policy::kLoad:
      return SmallestKeys(candidates, limit, [](const Candidate &c) { return LoadFigure(c.load); });
    case Policy::kRoundRobin: {
      const std::size_t first = state->next_round_robin++ % n;
      std::vector<uint32_t> servers;
      for (std::size_t k = 0; k < std::min(limit, n); ++k)
        servers.push_back(candidates[(first + k) % n].server);
      return servers;
    }
    case Policy::kRandom: {
      // A partial Fisher-Yates shuffle of the positions: `limit` distinct
      // draws, uniform.
      std::vector<uint32_t> positions(n);
      std::iota(positions.begin(), positions.end(), 0u);
      std::vector<uint32_t> servers;
      for (std::size_t k = 0; k < std::min(limit, n); ++k) {
        std::uniform_int_distribution<std::size_t> pick(k, n - 1);
        std::swap(positions[k], positions[pick(state->random)]);
        servers.push_back(candidates[positions[k]].server);
      }
      return servers;
    }
  }
  return {};
}

void Reserve(ServerLoad *load, double seconds) {
  ++load->reserved_calls;
  load->reserved_seconds += std::max(0.0, seconds);
}

std::vector<uint32_t> PreferPlanned(std::vector<uint32_t> ranked,
                                    std::span<const Candidate> candidates, const CallShape &call,
                                    uint32_t planned, double margin) {
  if (ranked.empty() || planned >= candidates.size()) return ranked;
  const double keep = Predict(candidates[planned], call).total();
  const double best = Predict(candidates[ranked.front()], call).total();
  if (best < keep - std::max(0.0, margin) * keep) return ranked;
  std::erase(ranked, planned);
  ranked.insert(ranked.begin(), planned);
  return ranked;
}

}  // namespace ninf::meta
