// Shared-key authentication of a connection, before any request is served.
//
// Every party that may call (clients, ninfd --status, later ninf-meta)
// holds a key that the daemon also holds, read from a key file only its
// owner can read. Neither side ever sends the key: each proves that it
// holds it by an HMAC-SHA256 over two fresh random nonces, one from each
// side, so a recorded exchange proves nothing on another connection.
//
//   client                                     ninfd
//   FRAME_AUTH       key id, client nonce  ->
//                 <- FRAME_CHALLENGE          server nonce,
//                                             server proof = HMAC(key, "server" | cn | sn)
//   (checks the server proof: a daemon without the key cannot pass as one)
//   FRAME_PROOF      client proof = HMAC(key, "client" | cn | sn)  ->
//   (requests follow right behind, without waiting)
//                                             (checks it in constant time; a
//                                             wrong proof is FRAME_ERROR
//                                             NINF_ERR_AUTH and the close)
//
// The key id (a hash of the key, not the key) lets a daemon hold the new and
// the old key while a key is being rotated (docs/security.md). Executables
// need no check of their own: they are reached only through a connection
// that ninfd has authenticated and hands over.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/status.h"

namespace ninf {

class Channel;

namespace auth {

inline constexpr std::size_t kNonceSize = 32;
inline constexpr std::size_t kProofSize = 32;  // SHA-256
inline constexpr std::size_t kKeyIdSize = 8;
// Shorter keys are refused: a guessable key protects nothing.
inline constexpr std::size_t kMinKeySize = 16;

using Nonce = std::array<uint8_t, kNonceSize>;
using Proof = std::array<uint8_t, kProofSize>;

struct Key {
  std::string secret;
  std::string id;  // kKeyIdSize bytes, sent in FRAME_AUTH
};

// The keys of one key file: one per line (blank lines and lines starting
// with '#' are skipped; surrounding blanks are trimmed). A client proves
// itself with the first; ninfd accepts any of them.
struct KeyRing {
  std::vector<Key> keys;
  std::string path;
  const Key *Find(std::string_view id) const;
};

// Reads `path`. Errors (NINF_ERR_CONFIG, naming the file): unreadable, not a
// regular file, owned by another user than the caller (root excepted), any
// permission for group or others (the remedy is named: chmod 600), no key,
// a key shorter than kMinKeySize.
Status LoadKeyFile(const std::string &path, KeyRing *out);

// kKeyIdSize bytes derived from the key (a hash: the id reveals nothing).
std::string KeyIdOf(std::string_view secret);

// A fresh random nonce. Errors: NINF_ERR_INTERNAL if the system's random
// source fails.
Status MakeNonce(Nonce *out);

// The proofs of the exchange above. `cn` and `sn` are the client's and the
// server's nonces.
Proof ServerProof(const Key &key, const Nonce &cn, const Nonce &sn);
Proof ClientProof(const Key &key, const Nonce &cn, const Nonce &sn);

// Compares a received proof with the expected one in constant time (no
// early exit that would tell an attacker how many leading bytes are right).
bool ProofMatches(const Proof &expected, std::string_view received);

// Copies bytes received in a message into a nonce; false unless exactly
// kNonceSize bytes.
bool ToNonce(std::string_view bytes, Nonce *out);

// The client side of the exchange on a connected channel, synchronously.
// Errors: NINF_ERR_AUTH when the daemon refuses the key, does not
// authenticate (it has no key) or fails its own proof; I/O errors as
// Channel reports them.
Status AuthenticateToServer(Channel &ch, const Key &key);

}  // namespace auth
}  // namespace ninf
