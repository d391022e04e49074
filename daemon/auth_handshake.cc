// The authentication handshake of a daemon's connections (the exchange
// itself is in protocol/auth.h).
//
// With keys, the first frame of a connection must be FRAME_AUTH and the
// second FRAME_PROOF; anything else, an unknown key or a wrong proof ends the
// connection with NINF_ERR_AUTH before a single request is served.
#include "daemon/auth_handshake.h"

#include <spdlog/spdlog.h>

#include "daemon/log.h"
#include "ninf.pb.h"

namespace ninf::daemon {
namespace {

// Why a client was refused, for the log. The client is told less: only
// that it failed and what a legitimate user should check.
void Refuse(Connection &conn, uint64_t *failures, const std::string &why, const Status &tell) {
  ++*failures;
  RateLimitedWarn("auth_failed", "event=auth_failed conn={} peer={} reason={}", conn.id(),
                  conn.peer(), Quoted(why));
  conn.Fail(tell);
}

// The client's remedies, naming the daemon that refused (its frame table's
// name: "ninfd", "ninf-meta"), so that a client of several daemons knows
// which key file to look at.
Status NeedsKey(const Connection &conn) {
  const std::string daemon = conn.rules().daemon;
  return Status(NINF_ERR_AUTH, daemon + " requires authentication: give the client a key of " +
                                   daemon +
                                   "'s key_file (NINF_KEY_FILE, or key_file in client.toml)");
}

Status Refused(const Connection &conn) {
  const std::string daemon = conn.rules().daemon;
  return Status(NINF_ERR_AUTH, "authentication failed: the client's key is not one of " + daemon +
                                   "'s (its key_file)");
}

}  // namespace

Proved ProvedBy(const Connection &conn) {
  return Proved{.authenticated = conn.auth().authenticated,
                .key_id = conn.auth().key_id,
                .peer_subject = conn.transport().peer_subject()};
}

void ServeAuthFrame(Connection &conn, const auth::KeyRing &keys, const FrameHeader &h,
                    std::string_view body, uint64_t idle_timeout_ms, uint64_t *failures) {
  Connection::AuthState &state = conn.auth();
  if (keys.keys.empty()) {
    // A client with a key asks; this daemon cannot prove anything. The
    // client refuses it rather than call a server it cannot tell from an
    // impostor.
    Refuse(conn, failures, "authentication asked of a server without a key",
           Status(NINF_ERR_AUTH, std::string(conn.rules().daemon) +
                                     " does not authenticate (it has no key_file), so it cannot "
                                     "prove who it is: run it with the key, or call it without "
                                     "one"));
    return;
  }
  if (state.authenticated) {
    Status st(NINF_ERR_PROTOCOL, "already authenticated");
    RateLimitedWarn("protocol_error", "event=protocol_error conn={} peer={} error={}", conn.id(),
                    conn.peer(), Quoted(st.message()));
    conn.Fail(st);
    return;
  }
  if (!state.challenged) {
    wire::AuthRequest request;
    if (h.type != FRAME_AUTH) {
      // The daemon's frame table says who sends this frame first and what
      // that peer must set (a ninfd registering: its own key file).
      const RequestRules::Frame *row = conn.rules().Find(h.type);
      const char *server = row ? row->unkeyed_refusal : nullptr;
      Refuse(conn, failures,
             std::string(server ? "a server without a key sent " : "first frame ") +
                 FrameTypeName(h.type),
             server ? Status(NINF_ERR_AUTH, server) : NeedsKey(conn));
      return;
    }
    if (!request.ParseFromArray(body.data(), static_cast<int>(body.size())) ||
        !auth::ToNonce(request.client_nonce(), &state.client_nonce)) {
      Refuse(conn, failures, "malformed AUTH", Status(NINF_ERR_PROTOCOL, "malformed AUTH message"));
      return;
    }
    const auth::Key *key = keys.Find(request.key_id());
    if (!key) {
      Refuse(conn, failures, "unknown key id", Refused(conn));
      return;
    }
    if (Status st = auth::MakeNonce(&state.server_nonce); !st.ok()) {
      spdlog::error("event=auth_error conn={} error={}", conn.id(), Quoted(st.message()));
      conn.Fail(st);
      return;
    }
    state.key = *key;
    state.challenged = true;
    auth::Proof proof = auth::ServerProof(state.key, state.client_nonce, state.server_nonce);
    wire::Challenge challenge;
    challenge.set_server_nonce(state.server_nonce.data(), state.server_nonce.size());
    challenge.set_server_proof(proof.data(), proof.size());
    conn.Reply(FRAME_CHALLENGE, &challenge);
    return;
  }
  wire::AuthProof answer;
  if (h.type != FRAME_PROOF || !answer.ParseFromArray(body.data(), static_cast<int>(body.size())) ||
      !auth::ProofMatches(auth::ClientProof(state.key, state.client_nonce, state.server_nonce),
                          answer.client_proof())) {
    Refuse(conn, failures, "wrong proof", Refused(conn));
    return;
  }
  state.authenticated = true;
  state.key_id = state.key.id;  // who owns what this connection keeps (server/kept_data_service.cc)
  state.key = {};               // the secret is not needed any more
  conn.SetIdleTimeout(idle_timeout_ms);
  spdlog::debug("event=authenticated conn={} peer={}", conn.id(), conn.peer());
}

void ReloadKeyFile(const std::string &path, auth::KeyRing *keys) {
  if (path.empty()) return;
  auth::KeyRing ring;
  if (Status st = auth::LoadKeyFile(path, &ring); !st.ok()) {
    spdlog::error("event=reload_failed key_file={} error={}", Quoted(path), Quoted(st.message()));
    return;
  }
  *keys = std::move(ring);
  spdlog::info("event=reloaded key_file={} keys={}", Quoted(path), keys->keys.size());
}

}  // namespace ninf::daemon
