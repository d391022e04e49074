// The bytes of one daemon connection (daemon/connection.h), in plaintext or
// through a TLS session: what a read or a write moves, the server side of
// the TLS handshake, sniffing a client that speaks the other way, and the
// session's end (a close_notify, or none when the daemon seals it to give
// the socket and the peer's session to another process). The connection
// decides when; this class says how, as recv() and send() would.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "protocol/tls.h"

namespace ninf::daemon {

class Transport {
 public:
  // `fd` (the connection's, not owned), `conn_id` and `peer` for log lines.
  Transport(int fd, uint64_t conn_id, const std::string &peer)
      : fd_(fd), conn_id_(conn_id), peer_(peer) {}

  // A connection of a TLS listener (`tls` set): its session, in the
  // accepting role. False (logged) when OpenSSL cannot make one.
  bool StartTls(const tls::Context &tls);

  // One read or write, through TLS while the session runs: bytes moved, 0
  // for the peer's end, -1 with errno (EAGAIN: not now).
  ssize_t Read(void *buf, std::size_t n);
  ssize_t Write(const void *buf, std::size_t n);
  // Decrypted bytes wait inside the session, where poll does not see them.
  bool HasPending() const;

  enum class Handshake {
    kWaiting,          // not done: poll for wants_write() ? writable : readable
    kDone,             // the session runs (peer_subject() is known)
    kPlaintextClient,  // the client spoke a frame in plaintext: the session is dropped
    kFailed,           // logged; the connection closes
  };
  // Drives the server side of the TLS handshake as far as the socket lets it.
  // `plaintext_allowed`: a plaintext client is one the daemon serves
  // (RequestRules::plaintext_beside_tls), not one it refuses: not logged as
  // a refusal.
  Handshake ContinueHandshake(bool plaintext_allowed);
  bool wants_write() const { return handshake_wants_write_; }
  // Whether the client's first bytes came (the handshake has begun).
  bool begun() const { return sniffed_; }

  // A plaintext connection's first bytes (`first`, `n` of them): whether
  // they are a TLS ClientHello, which this server does not answer. Asked of
  // the first read only; false afterwards and over TLS.
  bool RefuseClientHello(const void *first, ssize_t n);

  // Best effort: a close_notify before the write side is shut.
  void Shutdown();
  // Frees the session without a close_notify (which would land in the
  // middle of the client's handshake with the process the socket goes to):
  // from here on the connection writes nothing on it.
  void Seal();

  // Whether the connection came through a TLS listener; whether its
  // session still runs (before Seal); whether it was sealed.
  bool tls() const { return tls_; }
  bool active() const { return ssl_ != nullptr; }
  bool sealed() const { return sealed_; }
  // The verified client certificate's subject (RFC 2253, "CN=alice,O=site");
  // empty without TLS or without a client certificate.
  const std::string &peer_subject() const { return peer_subject_; }

 private:
  // What SSL_read_ex / SSL_write_ex returning `r` means, as Read and Write
  // report it.
  ssize_t TlsFailure(int r, bool reading);

  int fd_;
  uint64_t conn_id_;
  std::string peer_;
  bool tls_ = false;
  tls::SslPtr ssl_;
  bool sniffed_ = false;  // the first bytes were looked at (plaintext or TLS?)
  bool handshake_wants_write_ = false;
  bool sealed_ = false;
  std::string peer_subject_;
};

}  // namespace ninf::daemon
