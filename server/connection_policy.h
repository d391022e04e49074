// Which open connection a newcomer replaces when its address (or the
// server) is full. Pure logic on plain values, unit-tested without sockets
// (tests/server/policy_test.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace ninf::server {

// A new connection arrives from an address that has used up its share (or
// the server is full). Which open connection it replaces: the oldest that
// has not yet completed a single request (a slow or stuck sender; a client
// that works sends its request at once), if any.
struct ConnectionFacts {
  uint64_t id = 0;
  bool reading = false;     // still in the request phase (no call parked)
  uint64_t requests = 0;    // complete requests read
  uint64_t opened_seq = 0;  // order of acceptance
};
std::optional<uint64_t> ConnectionToReplace(const std::vector<ConnectionFacts> &candidates);

}  // namespace ninf::server
