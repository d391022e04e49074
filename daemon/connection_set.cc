#include "daemon/connection_set.h"

#include <sys/socket.h>

#include <utility>

#include "daemon/connection_policy.h"
#include "daemon/log.h"

namespace ninf::daemon {
namespace {

ConnectionFacts::Phase PhaseOf(const Connection &c) {
  // A TLS handshake is the reading of its first request: a connection that
  // stalls in it, or sends nothing, makes room as a plaintext one would.
  if (c.state() == Connection::State::kReading || c.state() == Connection::State::kHandshake)
    return ConnectionFacts::Phase::kReading;
  if (c.state() == Connection::State::kDraining) return ConnectionFacts::Phase::kDraining;
  return ConnectionFacts::Phase::kBusy;
}

// What the replacement policy is told of `c` (not const: auth() has no const
// overload).
ConnectionFacts FactsOf(Connection &c, bool auth_required, uint64_t now) {
  // Authentication frames are requests, but a connection that has not
  // proved a key has done nothing the newcomer could not.
  const uint64_t requests = auth_required && !c.auth().authenticated ? 0 : c.requests();
  return {.id = c.id(),
          .phase = PhaseOf(c),
          .requests = requests,
          .started = c.request_started(),
          .age_ms = now - c.opened_ms(),
          .opened_seq = c.id()};
}

// Looks at `c`'s socket (one syscall) to complete its facts and, if the
// policy then lets it go, closes it for the newcomer. Returns whether it
// did.
bool ReplaceIfIdle(Connection &c, ConnectionFacts &facts, bool address_full) {
  const Connection::Unread unread = c.PeekInput();
  facts.input_waiting = unread == Connection::Unread::kBytes;
  facts.peer_gone = unread == Connection::Unread::kEnd && !c.output_pending();
  if (!Replaceable(facts)) return false;
  const char *setting = address_full ? "max_connections_per_client" : "max_connections";
  RateLimitedWarn("connection_replaced", "event=connection_replaced conn={} peer={} reason={}",
                  c.id(), c.peer(), setting);
  // The error goes out if the socket takes it at once (an answered
  // connection gets none); the close does not wait, so the newcomer's
  // room is there now.
  if (c.state() == Connection::State::kReading && c.requests() == 0 && !facts.peer_gone)
    c.Fail(Status(NINF_ERR_SERVER, std::string("connection closed: it sent no request and a "
                                               "new connection needed room (setting ") +
                                       setting + ")"));
  c.Close();
  return true;
}

// The refusal when no connection could make room: it names the limit
// reached and its setting.
Status NoRoom(bool address_full, const ConnectionSet::Limits &limits, const std::string &address) {
  if (address_full)
    return Status(NINF_ERR_SERVER,
                  "too many connections: per-address connection limit " +
                      std::to_string(limits.per_address) + " reached for " + address +
                      " (setting max_connections_per_client): every open connection from it has a "
                      "request under way or holds a call");
  return Status(NINF_ERR_SERVER, "too many connections: connection limit " +
                                     std::to_string(limits.total) +
                                     " reached (setting max_connections): every open connection "
                                     "has a request under way or holds a call");
}

}  // namespace

std::string AddressOf(const std::string &peer) {
  std::size_t colon = peer.rfind(':');
  return colon == std::string::npos ? peer : peer.substr(0, colon);
}

void RefuseConnection(UniqueFd fd, const std::string &peer, const Status &why, bool tls) {
  std::string answer;
  if (tls) {
    // A TLS record: alert (21), version 3.3, 2 bytes, fatal (2), internal_error (80).
    answer.assign("\x15\x03\x03\x00\x02\x02\x50", 7);
    // What the client sent (its ClientHello) is read first: closing over
    // unread bytes would reset the connection, and the client might see the
    // reset instead of the alert.
    char scratch[4096];
    for (int i = 0; i < 8 && ::recv(fd.get(), scratch, sizeof scratch, MSG_DONTWAIT) > 0; ++i) {
    }
  } else {
    AppendErrorFrame(&answer, why);
  }
  // Best effort: a peer that does not read in time just sees the close.
  (void)::send(fd.get(), answer.data(), answer.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  RateLimitedWarn("connection_refused", "event=connection_refused peer={} reason={}", peer,
                  Quoted(why.message()));
}

Status ConnectionSet::MakeRoom(const std::string &peer, const Limits &limits, bool auth_required) {
  const std::string address = AddressOf(peer);
  const Occupancy open = CountOpen(address, limits);
  const bool address_full = open.here >= limits.per_address;
  if (!address_full && open.total < limits.total) return Status::Ok();
  if (ReplaceOne(address, address_full, auth_required)) return Status::Ok();
  return NoRoom(address_full, limits, address);
}

ConnectionSet::Occupancy ConnectionSet::CountOpen(const std::string &address,
                                                  const Limits &limits) const {
  auto counted = per_address_.find(address);
  Occupancy open{.here = counted == per_address_.end() ? 0 : counted->second,
                 .total = connections_.size()};
  if (open.here >= limits.per_address || open.total >= limits.total) {
    // A connection already closing still counts until its close callbacks
    // run, at the end of this loop iteration; its room is the newcomer's.
    // (A client that closes one connection and opens the next at once,
    // as a handle after its interface query does, is accepted in the same
    // iteration that read the first one's end when the machine is busy.)
    for (const auto &[c, owned] : connections_) {
      if (c->state() != Connection::State::kClosed) continue;
      --open.total;
      if (AddressOf(c->peer()) == address) --open.here;
    }
  }
  return open;
}

bool ConnectionSet::ReplaceOne(const std::string &address, bool address_full, bool auth_required) {
  const uint64_t now = uv_now(loop_);
  std::vector<ConnectionFacts> candidates;
  std::unordered_map<uint64_t, std::pair<Connection *, std::size_t>> by_id;
  for (const auto &[c, owned] : connections_) {
    if (c->state() == Connection::State::kClosed ||
        (address_full && AddressOf(c->peer()) != address))
      continue;
    by_id[c->id()] = {c, candidates.size()};
    candidates.push_back(FactsOf(*c, auth_required, now));
  }
  // Sockets are looked at (one syscall each) in the policy's order, until
  // one can go: under a flood of slow senders that is the first.
  for (uint64_t id : ReplacementOrder(candidates)) {
    auto [c, index] = by_id.at(id);
    if (ReplaceIfIdle(*c, candidates[index], address_full)) return true;
  }
  return false;
}

void ConnectionSet::Add(std::unique_ptr<Connection> conn) {
  ++per_address_[AddressOf(conn->peer())];
  Connection *raw = conn.get();
  connections_.emplace(raw, std::move(conn));
}

void ConnectionSet::Remove(Connection &conn) {
  if (auto it = per_address_.find(AddressOf(conn.peer()));
      it != per_address_.end() && --it->second == 0)
    per_address_.erase(it);
  connections_.erase(&conn);
}

std::vector<Connection *> ConnectionSet::List() const {
  std::vector<Connection *> all;
  all.reserve(connections_.size());
  for (const auto &[c, owned] : connections_) all.push_back(c);
  return all;
}

}  // namespace ninf::daemon
