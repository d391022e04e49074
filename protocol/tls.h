// TLS 1.3 (OpenSSL 3) for the TCP connections of clients, ninfd and the
// executables: the contexts built from the settings, the blocking
// handshakes the client and the executables run, and errors that name
// their cause and the setting that fixes it.
//
// Two kinds of sessions:
//   certificates  client <-> ninfd. The server shows `tls_cert`, signed by
//                 a CA the client trusts (`tls_ca`), and is verified by the
//                 host name or IP the client dialled; with `tls_client_ca`
//                 the client shows a certificate too (mutual TLS). The
//                 server issues session tickets and the client keeps one
//                 per server, so the next one-shot call resumes instead of
//                 paying for a full handshake.
//   hand-over     client <-> executable, on the very TCP socket ninfd
//                 handed over (docs/protocol.md, FRAME_HANDOVER): ninfd
//                 sends the client a fresh random 32-byte key inside its own
//                 session and gives the executable the same key; the two
//                 then run a TLS 1.3 handshake authenticated by that
//                 external PSK (with an ECDHE exchange: psk_dhe_ke), without
//                 certificates. The key is used once and never stored.
//
// The handshakes here block (poll on a non-blocking socket, each step
// bounded by the timeout); ninfd drives its server side from its event
// loop (daemon/connection.cc) with the same contexts.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "protocol/protocol_export.h"
#include "protocol/status.h"

struct bio_st;
struct ssl_st;
struct ssl_ctx_st;

namespace ninf::tls {

// The hand-over key (control.h: CTL_HANDOFF carries it to the executable).
inline constexpr std::size_t kPskSize = 32;
using Psk = std::array<uint8_t, kPskSize>;

struct SslFree {
  NINF_PROTOCOL_API void operator()(ssl_st *ssl) const;
};
using SslPtr = std::unique_ptr<ssl_st, SslFree>;
// Shared: a reload replaces a daemon's context while connections made with
// the old one keep it.
using Context = std::shared_ptr<ssl_ctx_st>;

struct ClientFiles {
  std::string ca;    // PEM trust anchors (tls_ca, NINF_TLS_CA)
  std::string cert;  // PEM client certificate for mutual TLS (optional)
  std::string key;   // its private key
};
// Errors: NINF_ERR_CONFIG naming the file and the setting.
NINF_PROTOCOL_API Status MakeClientContext(const ClientFiles &files, Context *out);

struct ServerFiles {
  std::string cert;       // tls_cert
  std::string key;        // tls_key
  std::string client_ca;  // tls_client_ca: require client certificates it signed
};
// Errors: NINF_ERR_CONFIG naming the file and the setting.
NINF_PROTOCOL_API Status MakeServerContext(const ServerFiles &files, Context *out);

// A fresh random hand-over key. Errors: NINF_ERR_INTERNAL.
NINF_PROTOCOL_API Status RandomPsk(Psk *out);

// The client's handshake with ninfd at host:port on the connected socket
// `fd`: verifies the server's certificate for `host` (a name or an IP) and
// resumes with the ticket kept from the last connection to host:port
// (unless `resume` is false: then every connection is a full handshake, as
// NINF_TLS_RESUME=0 asks; tickets are still kept for later callers).
// Errors: NINF_ERR_AUTH (certificate refused: expired, wrong host,
// untrusted; the message says which and what to set), NINF_ERR_CONNECT
// (the server does not speak TLS; `plaintext_server` is then set and the
// socket holds the server's plaintext answer, unread), NINF_ERR_TIMEOUT,
// NINF_ERR_COMMUNICATION.
NINF_PROTOCOL_API Status Connect(const Context &ctx, int fd, const std::string &host, int port,
                                 int timeout_ms, SslPtr *out, bool *plaintext_server,
                                 bool resume = true);

// How a PSK session's keys are made (RFC 8446 4.2.9).
enum class PskKeyExchange {
  // The key and an ECDHE (X25519) exchange: for a key that lives where it
  // may be read later (the launch token, in rank 0's environment), so that
  // a recording of the session stays sealed when it is.
  kWithEcdhe,
  // The key alone (psk_ke): for a fresh key that crossed inside a
  // forward-secret session and is used once (the hand-over, a redirect):
  // that session's ECDHE already protects it, and a second one would cost
  // each call a key generation and a shared secret on both sides.
  kKeyAlone,
};

// The hand-over handshake on `fd`: the client connects, the executable
// accepts, both with `psk` and the same `kex` (a client and an executable
// of different kinds still agree, with ECDHE). Errors: NINF_ERR_AUTH (the
// keys differ), NINF_ERR_TIMEOUT, NINF_ERR_COMMUNICATION.
NINF_PROTOCOL_API Status PskConnect(int fd, const Psk &psk, PskKeyExchange kex, int timeout_ms,
                                    SslPtr *out);
NINF_PROTOCOL_API Status PskAccept(int fd, const Psk &psk, PskKeyExchange kex, int timeout_ms,
                                   SslPtr *out);

// The accepting side of a PSK session (with ECDHE) whose records an event loop carries
// (ninfd's relay to a rank 0 on another host, server/control_relay.h): the
// records the peer sent go in with Feed, the ones to send come out of
// TakeOutput, and no socket is touched. Plaintext written before the
// handshake is done waits for it.
class NINF_PROTOCOL_API PskServerSession {
 public:
  // Errors: NINF_ERR_INTERNAL (OpenSSL could not make the session).
  static Status Start(const Psk &psk, std::unique_ptr<PskServerSession> *out);
  ~PskServerSession();
  PskServerSession(const PskServerSession &) = delete;
  PskServerSession &operator=(const PskServerSession &) = delete;

  // Records from the peer; what they decrypt to is appended to *plain.
  // Errors: NINF_ERR_AUTH (the peer holds another key), NINF_ERR_COMMUNICATION
  // (a bad record, or the peer's close_notify).
  Status Feed(const char *data, std::size_t n, std::string *plain);
  // Encrypts `n` bytes for the peer (queued until the handshake is done).
  Status Write(const void *data, std::size_t n);
  // The records to send now (empty when there are none).
  std::string TakeOutput();
  bool established() const { return established_; }

 private:
  PskServerSession() = default;
  Status Drain(std::string *plain);

  SslPtr ssl_;
  ::bio_st *in_ = nullptr;   // owned by ssl_
  ::bio_st *out_ = nullptr;  // owned by ssl_
  Psk psk_{};                // wiped once the handshake is done
  std::string queued_;       // plaintext written before the handshake
  bool established_ = false;
};

// Makes OpenSSL do now, once, what it would otherwise do lazily inside the
// first handshake: its initialisation (config file, default provider), the
// seeding of its random generator, the fetches of AES-128-GCM, SHA-256,
// HKDF and X25519, and the hand-over contexts. Executables and ninfd call it
// at start-up, so that the first call does not pay for it. Idempotent and
// thread-safe; a failure here is reported again by the first handshake.
NINF_PROTOCOL_API void WarmUp();

// The verified peer certificate's subject as an RFC 2253 string
// ("CN=alice,O=site"); empty when the peer showed none.
NINF_PROTOCOL_API std::string PeerSubject(ssl_st *ssl);

// OpenSSL's error queue as one line (and the queue cleared); `fallback`
// when it is empty.
NINF_PROTOCOL_API std::string TakeErrors(const char *fallback);

// Whether `bytes` (at least 2 of them) begin a TLS handshake record: what a
// plaintext listener sees from a TLS client.
inline bool LooksLikeClientHello(const uint8_t *bytes) {
  return bytes[0] == 0x16 && bytes[1] == 0x03;
}

}  // namespace ninf::tls
