// Which open connection a newcomer replaces when its address (or the
// daemon) is full: shared by ninfd and ninf-meta (daemon/connection_set.h
// applies it). Pure logic on plain values, unit-tested without sockets
// (tests/server/policy_test.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace ninf::daemon {

// How long a connection that has sent nothing at all is left alone: a
// client's thread may be descheduled between connect() and send(), and a
// connection is not a slow sender before it had the chance to send.
inline constexpr uint64_t kNewcomerGraceMs = 1000;

// What the policy knows of one open connection.
struct ConnectionFacts {
  enum class Phase {
    kReading,   // reading requests (between requests, in one, or in its TLS handshake)
    kDraining,  // its last reply is written out; it only waits for the peer's close
    kBusy,      // a call is parked, a reply is being written, or it is closing
  };
  uint64_t id = 0;
  Phase phase = Phase::kReading;
  uint64_t requests = 0;       // complete requests read (that count: see ConnectionSet)
  bool started = false;        // bytes of a request were read, but not all of it
  bool input_waiting = false;  // unread bytes wait in the socket
  bool peer_gone = false;      // the peer closed its side, and no reply waits to be written
  uint64_t age_ms = 0;         // since it was accepted
  uint64_t opened_seq = 0;     // order of acceptance
};

// The connection a newcomer replaces, or none (then the newcomer is refused
// with a reason). A connection whose request has arrived is never chosen:
// not one with a complete request, nor one whose bytes wait unread in the
// socket (the daemon simply has not read them yet: accepting comes before
// reading in a busy loop), nor one that holds a call (a handle's executable,
// a queued call). Tried in this order, oldest first within each tier:
//   1. draining connections: their last reply is out;
//   2. reading connections whose peer may have left (between requests, or
//      not started and still within the grace): replaced only if it has (a
//      client that closed after its last reply, the daemon not having seen
//      the close yet);
//   3. reading connections without a complete request that began one and
//      stalled (a slow or stuck sender: a working client sends its request
//      at once) or have sent nothing for kNewcomerGraceMs (an idle socket).
// Each is replaced only with nothing unread in its socket: closing it then
// loses nothing, and sends no reset.
std::optional<uint64_t> ConnectionToReplace(const std::vector<ConnectionFacts> &candidates);

// The same decision in two steps, so that a daemon looks at a socket
// (input_waiting, peer_gone: a syscall each) only when its turn comes:
// ReplacementOrder ranks the candidates from the other facts alone (those
// that can never be replaced are left out); Replaceable decides one once
// its socket facts are filled in. ConnectionToReplace is the first in the
// order that is Replaceable.
std::vector<uint64_t> ReplacementOrder(const std::vector<ConnectionFacts> &candidates);
bool Replaceable(const ConnectionFacts &c);

}  // namespace ninf::daemon
