// ninf-relay's bookkeeping and every decision on it, as plain data with no
// loop and no socket, so that each rule is unit-tested case by case
// (tests/relay/registrations_test.cc): which reverse server holds which
// name, the clients waiting for a server's dial-back (by one-time token),
// the bridges of each server, and the bounds on all three (max_servers,
// max_pending_dials, max_bridges_per_server, dial_timeout_seconds).
// RelayServer (relay_server.h) asks and acts: it sends the frames, fails
// the connections and owns the bridges.
//
// Connections are opaque here (Peer): RelayServer's daemon::Connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/status.h"

namespace ninf::relay {

// A connection, never dereferenced here.
using Peer = void *;

struct RegistrationLimits {
  std::size_t max_servers = 256;
  std::size_t max_pending_dials = 16;  // per server
  std::size_t max_bridges_per_server = 256;
  uint64_t dial_timeout_ms = 10000;
};

// A client waiting for its server's dial-back.
struct PendingDial {
  std::string server;
  Peer client = nullptr;
  uint64_t deadline_ms = 0;  // the clock's time by which the dial-back must come
};

// What a registration did.
struct Registered {
  // The control connection's first registration (log it); a keep-alive
  // renewing the name is not.
  bool fresh = false;
  // An older control connection that held the name: it is no longer the
  // server's (the caller closes it). Null if none.
  Peer replaced = nullptr;
};

// A control connection that closed: the name it held and the clients that
// were waiting for its dial-back (the caller fails each).
struct Departure {
  std::string name;  // "" when the connection held none
  std::vector<Peer> orphans;
};

class Registrations {
 public:
  explicit Registrations(const RegistrationLimits &limits) : limits_(limits) {}

  // RELAY_REGISTER{name} on `control`. A connection holds one name; the
  // newest registration of a name wins (a restarted ninfd comes back before
  // the old connection is seen gone); a new name over max_servers is
  // refused. Errors: NINF_ERR_PROTOCOL (a second name on one connection),
  // NINF_ERR_SERVER (max_servers).
  Status Register(const std::string &name, Peer control, Registered *out);

  // Whether a client may wait for `name`'s dial-back now. Errors:
  // NINF_ERR_CONNECT (no such server), NINF_ERR_SERVER (max_pending_dials
  // or max_bridges_per_server, naming which).
  Status Admit(const std::string &name) const;
  // Records `client` as waiting under `token` until now_ms plus the dial
  // timeout; returns the control connection to send RELAY_DIAL on. Call
  // only after Admit succeeded.
  Peer Wait(const std::string &token, const std::string &name, Peer client, uint64_t now_ms);

  // A dial-back presenting `token`: the client it is for, once (the token
  // is spent). Empty for an unknown or spent token.
  std::optional<PendingDial> TakeDial(const std::string &token);
  // The clients whose dial-back is late at `now_ms`; they wait no more.
  std::vector<PendingDial> Expire(uint64_t now_ms);

  void BridgeOpened(const std::string &server);
  void BridgeClosed(const std::string &server);

  // A connection closed: as a control connection it unregisters its name
  // (and orphans the clients waiting for it); as a waiting client it
  // gives up its place.
  Departure Closed(Peer conn);

  std::size_t servers() const { return servers_.size(); }
  // Clients waiting for `name`'s dial-back, and its bridges (0 if unknown).
  std::size_t pending(const std::string &name) const;
  std::size_t bridges(const std::string &name) const;
  // The control connection holding `name`, or null.
  Peer control(const std::string &name) const;

 private:
  struct Server {
    Peer control = nullptr;
    std::size_t pending = 0;
    std::size_t bridges = 0;
  };

  std::vector<Peer> Unregister(const std::string &name);
  void DropIfIdle(const std::string &name);

  RegistrationLimits limits_;
  std::unordered_map<std::string, Server> servers_;       // by name
  std::unordered_map<Peer, std::string> control_;         // control connection -> name
  std::unordered_map<std::string, PendingDial> pending_;  // by token
  std::unordered_map<Peer, std::string> waiting_;         // client -> token
};

}  // namespace ninf::relay
