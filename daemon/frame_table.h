// A daemon's requests as one table: a row per frame type it accepts (who
// may send it, how large it may be, what serves it). The only list: its
// RequestReader's whitelist and bounds (RequestRules, request_reader.h) and
// its dispatch (Dispatch below) both come from the rows. Builds on
// daemon/connection.h.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "daemon/connection.h"
#include "daemon/request_reader.h"
#include "protocol/frame.h"

namespace ninf::daemon {

// Who may send a frame.
enum class FrameAccess {
  kHandshake,      // the authentication handshake itself (FRAME_AUTH, FRAME_PROOF)
  kAuthenticated,  // with keys configured, only a connection that proved one
  kAnyone,         // no key needed: the frame carries its own proof or asks for nothing
                   // (ninf-relay: a client naming its server, a dial-back's token)
};

// One request a daemon D accepts. `serve` runs on the loop's thread for a
// whole frame (the header's bytes in `body`; a payload has been dropped).
template <class D>
struct FrameRoute {
  FrameType type;
  FrameAccess access;
  uint32_t max_header;   // largest protobuf header
  uint64_t max_payload;  // bytes after the header, read and dropped (FRAME_PROBE); 0: none
  void (*serve)(D &daemon, Connection &conn, const FrameHeader &h, std::string_view body);
  // What a peer is told when this frame comes first on a connection that
  // must prove a key and has not (auth_handshake.h): a frame only another
  // daemon sends (ninfd registering with ninf-meta or ninf-relay) names
  // that daemon's setting to fix. Null: the client's wording (its key file).
  const char *unkeyed_refusal = nullptr;
};

// The reader's rules from the table; `daemon` names it in messages. Keep
// the result for as long as connections use it.
template <class D>
RequestRules RulesOf(const char *daemon, std::span<const FrameRoute<D>> routes,
                     bool plaintext_beside_tls = false) {
  RequestRules rules{daemon, {}, plaintext_beside_tls};
  for (const FrameRoute<D> &r : routes)
    rules.frames.push_back({r.type, r.max_header, r.max_payload, r.unkeyed_refusal});
  return rules;
}

// Serves one request by its row. A frame that needs a proved key on a
// connection that has not proved one goes to the handshake's row, which
// refuses it (and counts the failure).
template <class D>
void Dispatch(D &daemon, std::span<const FrameRoute<D>> routes, bool keys_required,
              Connection &conn, const FrameHeader &h, std::string_view body) {
  auto find = [&](uint16_t type) -> const FrameRoute<D> * {
    for (const FrameRoute<D> &r : routes)
      if (r.type == type) return &r;
    return nullptr;
  };
  const FrameRoute<D> *route = find(h.type);
  if (!route) {  // the reader lets only the table's types through
    conn.Fail(Status(NINF_ERR_INTERNAL, "unexpected request type"));
    return;
  }
  if (route->access == FrameAccess::kAuthenticated && keys_required && !conn.auth().authenticated)
    route = find(FRAME_AUTH);
  route->serve(daemon, conn, h, body);
}

}  // namespace ninf::daemon
