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
  // A holder that registered (or renewed: the keep-alive) within this long
  // is live: another instance of its name is refused. Past it, the holder
  // counts as a ninfd that died without the relay seeing its connection
  // close (a host that crashed), and the newcomer replaces it.
  uint64_t live_ms = 40000;
};

// Who registers a name: the name, the identity its control connection
// proved (the key id; "" on a relay without keys) and the ninfd's instance
// (RelayRegister.instance: random per ninfd process).
struct Registrant {
  std::string name;
  std::string identity;
  std::string instance;
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

// A key id as the relay's messages and logs show it: hex digits ("none"
// for a connection that proved no key).
std::string KeyIdText(const std::string &identity);

class Registrations {
 public:
  explicit Registrations(const RegistrationLimits &limits) : limits_(limits) {}

  // RELAY_REGISTER on `control` at `now_ms`. A connection holds one name.
  // A name held by another connection is taken over only by the same
  // identity, and then only by the same instance (the ninfd reconnecting
  // before its old connection is seen gone) or once the holder is no longer
  // live (limits.live_ms). A new name over max_servers is refused.
  // Errors: NINF_ERR_PROTOCOL (a second name on one connection),
  // NINF_ERR_SERVER (max_servers), NINF_ERR_CONFIG (the name is held, live,
  // by another identity or another ninfd of the same one: a name is one
  // server's; the message says which).
  Status Register(const Registrant &who, Peer control, uint64_t now_ms, Registered *out);

  // Whether a client may wait for `name`'s dial-back now. Errors:
  // NINF_ERR_CONNECT (no such server), NINF_ERR_SERVER (max_pending_dials
  // or max_bridges_per_server, naming which).
  Status Admit(const std::string &name) const;
  // Records `client` as waiting under `token` until now_ms plus the dial
  // timeout; returns the control connection to send RELAY_DIAL on. Call
  // only after Admit succeeded.
  Peer Wait(const std::string &token, const std::string &name, Peer client, uint64_t now_ms);

  // A dial-back presenting `token` on a connection that proved `identity`:
  // the client it is for, once (the token is spent). Empty for an unknown
  // or spent token, and for one the server's registering identity did not
  // present (left unspent: a token read off the wire joins nothing, and the
  // server's own dial-back still comes).
  std::optional<PendingDial> TakeDial(const std::string &token, const std::string &identity);
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
    std::string identity;  // of the control connection's registration
    std::string instance;
    uint64_t heard_ms = 0;  // its last registration or keep-alive
    std::size_t pending = 0;
    std::size_t bridges = 0;
  };

  // Why `who` may not take `held` over at now_ms; Ok when it may.
  Status Conflict(const Registrant &who, const Server &held, uint64_t now_ms) const;
  std::optional<PendingDial> Take(const std::string &token);
  std::vector<Peer> Unregister(const std::string &name);
  void DropIfIdle(const std::string &name);

  RegistrationLimits limits_;
  std::unordered_map<std::string, Server> servers_;       // by name
  std::unordered_map<Peer, std::string> control_;         // control connection -> name
  std::unordered_map<std::string, PendingDial> pending_;  // by token
  std::unordered_map<Peer, std::string> waiting_;         // client -> token
};

}  // namespace ninf::relay
