#include "server/connection_policy.h"

namespace ninf::server {

std::optional<uint64_t> ConnectionToReplace(const std::vector<ConnectionFacts> &candidates) {
  const ConnectionFacts *oldest = nullptr;
  for (const ConnectionFacts &c : candidates)
    if (c.reading && c.requests == 0 && (!oldest || c.opened_seq < oldest->opened_seq)) oldest = &c;
  if (!oldest) return std::nullopt;
  return oldest->id;
}

}  // namespace ninf::server
