#include "protocol/tls.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>

#include "protocol/interrupt.h"

namespace ninf::tls {
namespace {

// AES-128-GCM first: the fastest suite on hosts with AES-NI (6 GB/s a core
// on the development VM, above what loopback TCP carries).
constexpr const char *kSuites =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";
// The hand-over PSK's identity: one key per hand-over, so no name is needed
// to pick it; a fixed one lets a stranger's handshake fail plainly.
constexpr unsigned char kPskIdentity[] = "ninf-handover";
constexpr unsigned char kPskSuite[2] = {0x13, 0x01};  // TLS_AES_128_GCM_SHA256
// Tickets kept by a client process, one per server.
constexpr std::size_t kMaxSessions = 1024;
// The longest certificate chain a peer may show, intermediates between its
// certificate and the trust anchor (OpenSSL's default is 100): a site's
// chains have one or two, and each link is a signature the daemon checks
// before it knows who is asking, so a stranger's 100-link chain would
// cost 100 verifications per handshake.
constexpr int kMaxChainDepth = 8;
// The largest Certificate message taken (OpenSSL's default is 100 KiB):
// enough for chains of RSA-4096 certificates up to kMaxChainDepth.
constexpr long kMaxCertList = 48 * 1024;
// A read fills this much at once (read-ahead): fewer recv calls for arrays.
constexpr std::size_t kReadBuffer = 64 * 1024;

Status Timeout(int timeout_ms) {
  return Status(NINF_ERR_TIMEOUT,
                "no progress in the TLS handshake for " + std::to_string(timeout_ms) + " ms");
}

// Waits for `events` on `fd`: Ok, or the timeout, the interrupt check's
// stop (interrupt.h) or poll's error.
Status WaitFor(int fd, short events, int timeout_ms) {
  int err = 0;
  switch (WaitFd(fd, events, timeout_ms, &err)) {
    case WaitResult::kReady:
      return Status::Ok();
    case WaitResult::kTimeout:
      return Timeout(timeout_ms);
    case WaitResult::kInterrupted:
      return InterruptedStatus();
    case WaitResult::kError:
      break;
  }
  return Status(NINF_ERR_COMMUNICATION, std::string("poll: ") + std::strerror(err));
}

void CommonSetup(SSL_CTX *ctx) {
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_ciphersuites(ctx, kSuites);
  SSL_CTX_set_read_ahead(ctx, 1);
  SSL_CTX_set_default_read_buffer_len(ctx, kReadBuffer);
  SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // A peer that closes without close_notify reads as a plain end of stream:
  // the frames carry their own lengths, so a truncated frame is still
  // caught, and ninfd's hand-over must end its session without one.
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
}

Status ConfigError(const std::string &what) {
  return Status(NINF_ERR_CONFIG, what + ": " + TakeErrors("unknown OpenSSL error"));
}

// A file OpenSSL could not load: a file that cannot be opened is said with
// the system's reason (OpenSSL's own is "system lib", once per layer),
// anything else with OpenSSL's.
Status FileError(const std::string &what, const std::string &path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    ERR_clear_error();
    return Status(NINF_ERR_CONFIG, what + " " + path + ": " + std::strerror(err));
  }
  ::close(fd);
  return ConfigError(what + " " + path);
}

// The client's session cache: the newest ticket of each server, so that a
// one-shot call resumes (one ticket per server: tickets are meant to be
// used once, and a new one comes with every resumed connection).
std::mutex g_sessions_mu;
std::map<std::string, SSL_SESSION *> *g_sessions = new std::map<std::string, SSL_SESSION *>;
int g_key_index = -1;  // SSL ex_data: the std::string server key

void FreeKey(void *, void *ptr, CRYPTO_EX_DATA *, int, long, void *) {
  delete static_cast<std::string *>(ptr);
}

int KeyIndex() {
  static std::once_flag once;
  std::call_once(once,
                 [] { g_key_index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, FreeKey); });
  return g_key_index;
}

int OnNewSession(SSL *ssl, SSL_SESSION *session) {
  auto *key = static_cast<std::string *>(SSL_get_ex_data(ssl, KeyIndex()));
  if (!key) return 0;
  std::lock_guard<std::mutex> lock(g_sessions_mu);
  // Bounded: a client that has talked to very many servers forgets the
  // tickets of some (their next connection is a full handshake).
  if (g_sessions->size() >= kMaxSessions && !g_sessions->count(*key)) {
    SSL_SESSION_free(g_sessions->begin()->second);
    g_sessions->erase(g_sessions->begin());
  }
  SSL_SESSION *&slot = (*g_sessions)[*key];
  if (slot) SSL_SESSION_free(slot);
  slot = session;
  return 1;  // the cache keeps the reference
}

// The external PSK as a session (TLS 1.3, AES-128-GCM-SHA256).
SSL_SESSION *PskSession(SSL *ssl, const Psk &psk) {
  const SSL_CIPHER *cipher = SSL_CIPHER_find(ssl, kPskSuite);
  if (!cipher) return nullptr;
  SSL_SESSION *s = SSL_SESSION_new();
  if (!s) return nullptr;
  if (!SSL_SESSION_set1_master_key(s, psk.data(), psk.size()) ||
      !SSL_SESSION_set_cipher(s, cipher) || !SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION)) {
    SSL_SESSION_free(s);
    return nullptr;
  }
  return s;
}

int UsePsk(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen,
           SSL_SESSION **sess) {
  const auto *psk = static_cast<const Psk *>(SSL_get_app_data(ssl));
  const SSL_CIPHER *cipher = SSL_CIPHER_find(ssl, kPskSuite);
  *sess = nullptr;
  *id = nullptr;
  *idlen = 0;
  if (!psk || !cipher) return 0;
  if (md && md != SSL_CIPHER_get_handshake_digest(cipher)) return 1;  // no PSK for this suite
  *sess = PskSession(ssl, *psk);
  if (!*sess) return 0;
  *id = kPskIdentity;
  *idlen = sizeof kPskIdentity - 1;
  return 1;
}

int FindPsk(SSL *ssl, const unsigned char *id, size_t idlen, SSL_SESSION **sess) {
  const auto *psk = static_cast<const Psk *>(SSL_get_app_data(ssl));
  *sess = nullptr;
  if (!psk) return 0;
  if (idlen != sizeof kPskIdentity - 1 || std::memcmp(id, kPskIdentity, idlen) != 0) return 1;
  *sess = PskSession(ssl, *psk);
  return *sess ? 1 : 0;
}

// The key alone (PskKeyExchange::kKeyAlone). OpenSSL 3.0's server takes
// ECDHE whenever the client's key share is in a group it supports, psk_ke
// being allowed or not (SSL_OP_PREFER_NO_DHE_KEX arrives in 3.3), and its
// client always sends one share. So both allow psk_ke, the client offers
// only a P-256 share and the server supports only X25519: no group in
// common, and with the key in hand the server goes on with psk_ke rather
// than asking for another share. The P-256 key the client makes is unused
// (about 20 us); the X25519 key pair and both shared secrets are saved
// (protocol_test checks SSL_get_negotiated_group is 0).
void KeyAlone(SSL_CTX *ctx, bool server) {
  SSL_CTX_set_options(ctx, SSL_OP_ALLOW_NO_DHE_KEX);
  SSL_CTX_set1_groups_list(ctx, server ? "X25519" : "P-256");
}

SSL_CTX *PskContext(bool server, PskKeyExchange kex) {
  static SSL_CTX *contexts[2][2] = {};
  static std::once_flag once[2][2];
  const int k = kex == PskKeyExchange::kKeyAlone;
  std::call_once(once[server][k], [server, k] {
    SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    if (!ctx) return;
    CommonSetup(ctx);
    SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256");
    if (k) KeyAlone(ctx, server);
    if (server) {
      SSL_CTX_set_num_tickets(ctx, 0);  // the key is used once: nothing to resume
      SSL_CTX_set_psk_find_session_callback(ctx, FindPsk);
    } else {
      SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);  // the PSK authenticates
      SSL_CTX_set_psk_use_session_callback(ctx, UsePsk);
    }
    contexts[server][k] = ctx;
  });
  return contexts[server][k];
}

}  // namespace

void WarmUp() {
  static std::once_flag once;
  std::call_once(once, [] {
    OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG, nullptr);
    // Seeds the primary DRBG from the kernel (the first RAND_bytes of the
    // process does it otherwise, inside the first ClientHello).
    unsigned char byte;
    (void)RAND_bytes(&byte, 1);
    // Fetched once, the algorithms stay in the default library context's
    // method store, where the handshakes' own fetches find them.
    EVP_CIPHER_free(EVP_CIPHER_fetch(nullptr, "AES-128-GCM", nullptr));
    EVP_MD_free(EVP_MD_fetch(nullptr, "SHA256", nullptr));
    EVP_KDF_free(EVP_KDF_fetch(nullptr, "TLS13-KDF", nullptr));
    EVP_KDF_free(EVP_KDF_fetch(nullptr, "HKDF", nullptr));
    EVP_PKEY_free(EVP_PKEY_Q_keygen(nullptr, nullptr, "X25519"));
    // SSL_CTX_new loads every cipher and digest TLS may use: the bulk of a
    // first context's cost. The hand-over's contexts live for the process.
    PskContext(true, PskKeyExchange::kKeyAlone);
    PskContext(false, PskKeyExchange::kKeyAlone);
    ERR_clear_error();
  });
}

namespace {

// Why a certificate was refused, and what fixes it.
Status VerifyFailure(long code, const std::string &server) {
  std::string why = X509_verify_cert_error_string(code);
  switch (code) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return Status(NINF_ERR_AUTH, "TLS: the certificate of server " + server + " has expired (" +
                                       why + "): the server's operator must renew its tls_cert");
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return Status(NINF_ERR_AUTH, "TLS: the certificate of server " + server +
                                       " is not valid yet (" + why +
                                       "): check the clocks, or the server's tls_cert");
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return Status(NINF_ERR_AUTH,
                    "TLS: the certificate of server " + server + " is for another host (" + why +
                        "): connect by a name or address the certificate lists, or give the "
                        "server a tls_cert for this one");
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return Status(NINF_ERR_AUTH,
                    "TLS: the certificate of server " + server + " is untrusted (" + why +
                        "): it is not signed by a CA in the client's tls_ca (NINF_TLS_CA)");
    default:
      return Status(NINF_ERR_AUTH,
                    "TLS: the certificate of server " + server + " was refused: " + why);
  }
}

enum class Role { kConnect, kAccept };

// Runs the handshake of `ssl` on `fd` to its end. `sniff`: before the first
// bytes of the peer are read, look whether they are a plaintext Ninf frame.
Status Handshake(SSL *ssl, int fd, Role role, int timeout_ms, const std::string &peer, bool sniff,
                 bool *plaintext) {
  const int wait_ms = timeout_ms < 0 ? -1 : timeout_ms;
  for (;;) {
    ERR_clear_error();
    const int r = role == Role::kConnect ? SSL_connect(ssl) : SSL_accept(ssl);
    if (r == 1) return Status::Ok();
    const int err = SSL_get_error(ssl, r);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      NINF_RETURN_IF_ERROR(WaitFor(fd, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, wait_ms));
      if (sniff && err == SSL_ERROR_WANT_READ) {
        // The session reads from an empty memory buffer until now (Connect),
        // so no byte of the answer has been taken from the socket yet.
        sniff = false;
        unsigned char first[4];
        const ssize_t n = ::recv(fd, first, sizeof first, MSG_PEEK | MSG_DONTWAIT);
        if (n == static_cast<ssize_t>(sizeof first) && std::memcmp(first, "NINF", 4) == 0) {
          if (plaintext) *plaintext = true;
          return Status(NINF_ERR_CONNECT, "server " + peer +
                                              " does not speak TLS (it answered in plaintext); "
                                              "unset tls_ca (NINF_TLS_CA) for this server");
        }
        BIO *socket_bio = BIO_new_socket(fd, BIO_NOCLOSE);
        if (!socket_bio) return Status(NINF_ERR_INTERNAL, "BIO_new_socket failed");
        SSL_set0_rbio(ssl, socket_bio);
      }
      continue;
    }
    if (role == Role::kConnect) {
      const long verify = SSL_get_verify_result(ssl);
      if (verify != X509_V_OK) return VerifyFailure(verify, peer);
      if (ERR_GET_REASON(ERR_peek_error()) == SSL_R_TLSV1_ALERT_INTERNAL_ERROR) {
        ERR_clear_error();
        return Status(NINF_ERR_SERVER,
                      "server " + peer +
                          " refused the connection (TLS alert \"internal error\"): ninfd and "
                          "ninf-meta answer so when they have no room for another connection "
                          "(max_connections, max_connections_per_client); the server's log says "
                          "which (event=connection_refused)");
      }
    }
    std::string detail = TakeErrors("");
    if (detail.empty())
      detail = err == SSL_ERROR_SYSCALL || err == SSL_ERROR_ZERO_RETURN
                   ? "the peer closed the connection"
                   : "handshake failed";
    return Status(NINF_ERR_COMMUNICATION, "TLS handshake with " + peer + " failed: " + detail);
  }
}

}  // namespace

void SslFree::operator()(ssl_st *ssl) const {
  // Marked as shut down (nothing is sent): OpenSSL would otherwise take a
  // session freed without a close_notify as bad and its ticket as spent,
  // and a hand-over frees ninfd's session exactly so.
  if (ssl) SSL_set_shutdown(ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  SSL_free(ssl);
}

std::string TakeErrors(const char *fallback) {
  std::string text, last;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    // The last field is the reason: "error:0A000086:SSL routines::certificate verify failed".
    const char *reason = std::strrchr(buf, ':');
    std::string next = reason && reason[1] ? reason + 1 : buf;
    if (next == last) continue;  // each layer of OpenSSL may say the same again
    if (!text.empty()) text += "; ";
    text += next;
    last = std::move(next);
  }
  return text.empty() ? fallback : text;
}

Status MakeClientContext(const ClientFiles &files, Context *out) {
  Context ctx(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  if (!ctx) return ConfigError("TLS client context");
  CommonSetup(ctx.get());
  if (SSL_CTX_load_verify_locations(ctx.get(), files.ca.c_str(), nullptr) != 1)
    return FileError("tls_ca (NINF_TLS_CA)", files.ca);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  if (files.cert.empty() != files.key.empty())
    return Status(NINF_ERR_CONFIG,
                  "tls_cert and tls_key (NINF_TLS_CERT, NINF_TLS_KEY) come together: set both");
  if (!files.cert.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx.get(), files.cert.c_str()) != 1)
      return FileError("tls_cert (NINF_TLS_CERT)", files.cert);
    if (SSL_CTX_use_PrivateKey_file(ctx.get(), files.key.c_str(), SSL_FILETYPE_PEM) != 1)
      return FileError("tls_key (NINF_TLS_KEY)", files.key);
    if (SSL_CTX_check_private_key(ctx.get()) != 1)
      return ConfigError("tls_key (NINF_TLS_KEY) " + files.key + " does not match tls_cert");
  }
  SSL_CTX_set_session_cache_mode(ctx.get(),
                                 SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx.get(), OnNewSession);
  *out = std::move(ctx);
  return Status::Ok();
}

Status MakeServerContext(const ServerFiles &files, Context *out) {
  Context ctx(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  if (!ctx) return ConfigError("TLS server context");
  CommonSetup(ctx.get());
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_ENABLE_PARTIAL_WRITE);
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), files.cert.c_str()) != 1)
    return FileError("tls_cert", files.cert);
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), files.key.c_str(), SSL_FILETYPE_PEM) != 1)
    return FileError("tls_key", files.key);
  if (SSL_CTX_check_private_key(ctx.get()) != 1)
    return ConfigError("tls_key " + files.key + " does not match tls_cert");
  if (!files.client_ca.empty()) {
    if (SSL_CTX_load_verify_locations(ctx.get(), files.client_ca.c_str(), nullptr) != 1)
      return FileError("tls_client_ca", files.client_ca);
    STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(files.client_ca.c_str());
    if (names) SSL_CTX_set_client_CA_list(ctx.get(), names);
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    SSL_CTX_set_verify_depth(ctx.get(), kMaxChainDepth);
    SSL_CTX_set_max_cert_list(ctx.get(), kMaxCertList);
  }
  // Resumption (tickets) needs a session id context once clients are
  // verified; one ticket per connection is enough for the next one.
  static const unsigned char kContext[] = "ninfd";
  SSL_CTX_set_session_id_context(ctx.get(), kContext, sizeof kContext - 1);
  SSL_CTX_set_num_tickets(ctx.get(), 1);
  *out = std::move(ctx);
  return Status::Ok();
}

Status RandomPsk(Psk *out) {
  if (RAND_bytes(out->data(), static_cast<int>(out->size())) != 1)
    return Status(NINF_ERR_INTERNAL, "RAND_bytes: " + TakeErrors("no randomness"));
  return Status::Ok();
}

Status Connect(const Context &ctx, int fd, const std::string &host, int port, int timeout_ms,
               SslPtr *out, bool *plaintext_server, bool resume) {
  if (plaintext_server) *plaintext_server = false;
  const std::string server = host + ":" + std::to_string(port);
  SslPtr ssl(SSL_new(ctx.get()));
  // The ClientHello goes to the socket; the answer is first read from an
  // empty buffer, so that the handshake waits (WANT_READ) before it takes
  // a byte: a plaintext server's answer then stays whole in the socket,
  // where it is recognised (Handshake) and read as a frame.
  BIO *wbio = BIO_new_socket(fd, BIO_NOCLOSE);
  BIO *rbio = BIO_new(BIO_s_mem());
  if (!ssl || !wbio || !rbio) {
    BIO_free(wbio);
    BIO_free(rbio);
    return Status(NINF_ERR_INTERNAL, "SSL_new: " + TakeErrors("failed"));
  }
  BIO_set_mem_eof_return(rbio, -1);  // empty: "retry", not end of stream
  SSL_set_bio(ssl.get(), rbio, wbio);
  // By IP when the client dialled one, else by name (with SNI).
  if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl.get()), host.c_str()) != 1) {
    ERR_clear_error();
    SSL_set_tlsext_host_name(ssl.get(), host.c_str());
    if (SSL_set1_host(ssl.get(), host.c_str()) != 1)
      return Status(NINF_ERR_INTERNAL, "SSL_set1_host: " + TakeErrors("failed"));
  }
  SSL_set_ex_data(ssl.get(), KeyIndex(), new std::string(server));
  if (resume) {
    std::lock_guard<std::mutex> lock(g_sessions_mu);
    auto it = g_sessions->find(server);
    if (it != g_sessions->end()) {
      SSL_set_session(ssl.get(), it->second);
      // Used once: the connection brings a fresh ticket.
      SSL_SESSION_free(it->second);
      g_sessions->erase(it);
    }
  }
  NINF_RETURN_IF_ERROR(
      Handshake(ssl.get(), fd, Role::kConnect, timeout_ms, server, true, plaintext_server));
  *out = std::move(ssl);
  return Status::Ok();
}

namespace {

Status PskHandshake(int fd, const Psk &psk, PskKeyExchange kex, int timeout_ms, Role role,
                    SslPtr *out) {
  SSL_CTX *ctx = PskContext(role == Role::kAccept, kex);
  if (!ctx) return Status(NINF_ERR_INTERNAL, "TLS context: " + TakeErrors("failed"));
  SslPtr ssl(SSL_new(ctx));
  if (!ssl || SSL_set_fd(ssl.get(), fd) != 1)
    return Status(NINF_ERR_INTERNAL, "SSL_new: " + TakeErrors("failed"));
  SSL_set_app_data(ssl.get(), const_cast<Psk *>(&psk));
  Status st = Handshake(ssl.get(), fd, role, timeout_ms,
                        role == Role::kAccept ? "the client" : "the executable", false, nullptr);
  SSL_set_app_data(ssl.get(), nullptr);  // the key is the caller's and goes with the handshake
  NINF_RETURN_IF_ERROR(st);
  *out = std::move(ssl);
  return Status::Ok();
}

}  // namespace

Status PskConnect(int fd, const Psk &psk, PskKeyExchange kex, int timeout_ms, SslPtr *out) {
  return PskHandshake(fd, psk, kex, timeout_ms, Role::kConnect, out);
}

Status PskAccept(int fd, const Psk &psk, PskKeyExchange kex, int timeout_ms, SslPtr *out) {
  return PskHandshake(fd, psk, kex, timeout_ms, Role::kAccept, out);
}

Status PskServerSession::Start(const Psk &psk, std::unique_ptr<PskServerSession> *out) {
  SSL_CTX *ctx = PskContext(true, PskKeyExchange::kWithEcdhe);
  std::unique_ptr<PskServerSession> session(new PskServerSession);
  if (ctx) session->ssl_.reset(SSL_new(ctx));
  BIO *in = BIO_new(BIO_s_mem());
  BIO *outgoing = BIO_new(BIO_s_mem());
  if (!session->ssl_ || !in || !outgoing) {
    BIO_free(in);
    BIO_free(outgoing);
    return Status(NINF_ERR_INTERNAL, "SSL_new: " + TakeErrors("failed"));
  }
  BIO_set_mem_eof_return(in, -1);  // empty: "retry", not end of stream
  SSL_set_bio(session->ssl_.get(), in, outgoing);
  session->in_ = in;
  session->out_ = outgoing;
  session->psk_ = psk;
  SSL_set_app_data(session->ssl_.get(), &session->psk_);
  SSL_set_accept_state(session->ssl_.get());
  *out = std::move(session);
  return Status::Ok();
}

PskServerSession::~PskServerSession() { OPENSSL_cleanse(psk_.data(), psk_.size()); }

Status PskServerSession::Feed(const char *data, std::size_t n, std::string *plain) {
  if (n > 0 && BIO_write(in_, data, static_cast<int>(n)) != static_cast<int>(n))
    return Status(NINF_ERR_INTERNAL, "BIO_write: " + TakeErrors("failed"));
  if (!established_) {
    ERR_clear_error();
    const int r = SSL_do_handshake(ssl_.get());
    if (r != 1) {
      if (SSL_get_error(ssl_.get(), r) == SSL_ERROR_WANT_READ) return Status::Ok();
      return Status(NINF_ERR_AUTH, "TLS handshake failed: " + TakeErrors("handshake failed"));
    }
    established_ = true;
    SSL_set_app_data(ssl_.get(), nullptr);
    OPENSSL_cleanse(psk_.data(), psk_.size());
    std::string queued = std::move(queued_);
    queued_.clear();
    if (!queued.empty()) NINF_RETURN_IF_ERROR(Write(queued.data(), queued.size()));
  }
  return Drain(plain);
}

Status PskServerSession::Drain(std::string *plain) {
  char buf[4096];
  for (;;) {
    ERR_clear_error();
    std::size_t got = 0;
    const int r = SSL_read_ex(ssl_.get(), buf, sizeof buf, &got);
    if (r == 1) {
      plain->append(buf, got);
      continue;
    }
    const int err = SSL_get_error(ssl_.get(), r);
    if (err == SSL_ERROR_WANT_READ) return Status::Ok();
    if (err == SSL_ERROR_ZERO_RETURN)
      return Status(NINF_ERR_COMMUNICATION, "the peer ended its TLS session");
    return Status(NINF_ERR_COMMUNICATION, "TLS receive: " + TakeErrors("bad record"));
  }
}

Status PskServerSession::Write(const void *data, std::size_t n) {
  if (!established_) {
    queued_.append(static_cast<const char *>(data), n);
    return Status::Ok();
  }
  ERR_clear_error();
  std::size_t put = 0;
  // A memory BIO takes every record at once: no partial write, no retry.
  if (n > 0 && SSL_write_ex(ssl_.get(), data, n, &put) != 1)
    return Status(NINF_ERR_COMMUNICATION, "TLS send: " + TakeErrors("failed"));
  return Status::Ok();
}

std::string PskServerSession::TakeOutput() {
  std::string records(BIO_ctrl_pending(out_), '\0');
  if (records.empty()) return records;
  const int got = BIO_read(out_, records.data(), static_cast<int>(records.size()));
  records.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return records;
}

std::string PeerSubject(ssl_st *ssl) {
  X509 *cert = SSL_get0_peer_certificate(ssl);
  if (!cert) return {};
  BIO *bio = BIO_new(BIO_s_mem());
  if (!bio) return {};
  X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
  char *data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string subject(data, n > 0 ? static_cast<std::size_t>(n) : 0);
  BIO_free(bio);
  return subject;
}

}  // namespace ninf::tls
