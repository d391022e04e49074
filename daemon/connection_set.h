// The open connections of a daemon (ninfd and ninf-meta alike), with the
// limits on them: at most `total` in all and `per_address` from one client
// address. A newcomer over a limit replaces the connection the policy names
// (ConnectionToReplace, connection_policy.h: never one whose request has
// arrived or that holds a call), or is refused with a reason that names
// the limit and its setting. Builds on daemon/connection.h. Single-threaded,
// on the daemon's loop.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "daemon/connection.h"
#include "daemon/unique_fd.h"
#include "protocol/status.h"

namespace ninf::daemon {

// "10.0.0.7:51234" -> "10.0.0.7", "[::1]:3000" -> "[::1]",
// "unix:uid=1000:4242" -> "unix:uid=1000": connections are counted per
// client address (on the Unix-domain socket, per user).
std::string AddressOf(const std::string &peer);

// Answers a connection that gets no room (`why`, from ConnectionSet::MakeRoom)
// in what its client speaks, best effort: one FRAME_ERROR, or on a TLS port
// (`tls`) a fatal TLS alert "internal error", which the client reports as
// this refusal (protocol/tls.cc) rather than as a server without TLS. No
// handshake is made for it: a flood that fills the room costs no crypto.
// The socket closes with `fd`.
void RefuseConnection(UniqueFd fd, const std::string &peer, const Status &why, bool tls);

class ConnectionSet {
 public:
  struct Limits {
    std::size_t total = 1024;       // setting max_connections
    std::size_t per_address = 256;  // setting max_connections_per_client
  };

  explicit ConnectionSet(uv_loop_t *loop) : loop_(loop) {}

  // Room for one more connection from `peer` under `limits`, replacing an
  // open one if the policy names one (it is sent an error and closed now).
  // With `auth_required`, the requests of a connection that has not proved
  // a key do not count (it has done nothing a newcomer could not).
  // Errors: NINF_ERR_SERVER naming the limit that is reached and its setting.
  Status MakeRoom(const std::string &peer, const Limits &limits, bool auth_required);

  // Takes a newly opened connection.
  void Add(std::unique_ptr<Connection> conn);
  // Frees `conn` (from Delegate::OnClosed): not to be touched afterwards.
  void Remove(Connection &conn);

  std::size_t size() const { return connections_.size(); }
  bool empty() const { return connections_.empty(); }
  // The open connections, for a caller that may close some of them.
  std::vector<Connection *> List() const;

 private:
  // Connections open in all and from one address, those already closing
  // left out when a limit is reached.
  struct Occupancy {
    std::size_t here;   // from the newcomer's address
    std::size_t total;  // in all
  };
  Occupancy CountOpen(const std::string &address, const Limits &limits) const;
  // Closes the first connection the policy lets go (of `address` only when
  // `address_full`); false when none may.
  bool ReplaceOne(const std::string &address, bool address_full, bool auth_required);

  uv_loop_t *loop_;
  std::unordered_map<Connection *, std::unique_ptr<Connection>> connections_;
  // Open connections per client address, kept as they open and close so
  // that an accept under the limits does not scan them all.
  std::unordered_map<std::string, std::size_t> per_address_;
};

}  // namespace ninf::daemon
