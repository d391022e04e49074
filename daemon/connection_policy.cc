#include "daemon/connection_policy.h"

#include <algorithm>
#include <tuple>

namespace ninf::daemon {
namespace {

using Phase = ConnectionFacts::Phase;

// A reading connection that began no request and may be replaced for its
// silence alone (or began one and stalled).
bool Stalled(const ConnectionFacts &c) {
  return c.phase == Phase::kReading && c.requests == 0 &&
         (c.started || c.age_ms >= kNewcomerGraceMs);
}

// The tier of ConnectionToReplace's order (1-3), or 0: never.
int Tier(const ConnectionFacts &c) {
  switch (c.phase) {
    case Phase::kDraining:
      return 1;
    case Phase::kReading:
      if (Stalled(c)) return 3;
      return c.started ? 0 : 2;  // mid-request after complete ones: never
    case Phase::kBusy:
      return 0;
  }
  return 0;
}

}  // namespace

bool Replaceable(const ConnectionFacts &c) {
  if (c.input_waiting) return false;
  switch (Tier(c)) {
    case 1:
      return true;
    case 2:
      return c.peer_gone;
    case 3:
      return true;
    default:
      return false;
  }
}

std::vector<uint64_t> ReplacementOrder(const std::vector<ConnectionFacts> &candidates) {
  std::vector<const ConnectionFacts *> ranked;
  for (const ConnectionFacts &c : candidates)
    if (Tier(c) > 0) ranked.push_back(&c);
  std::sort(ranked.begin(), ranked.end(), [](const ConnectionFacts *a, const ConnectionFacts *b) {
    return std::make_tuple(Tier(*a), a->opened_seq) < std::make_tuple(Tier(*b), b->opened_seq);
  });
  std::vector<uint64_t> ids;
  ids.reserve(ranked.size());
  for (const ConnectionFacts *c : ranked) ids.push_back(c->id);
  return ids;
}

std::optional<uint64_t> ConnectionToReplace(const std::vector<ConnectionFacts> &candidates) {
  for (uint64_t id : ReplacementOrder(candidates))
    for (const ConnectionFacts &c : candidates)
      if (c.id == id && Replaceable(c)) return id;
  return std::nullopt;
}

}  // namespace ninf::daemon
