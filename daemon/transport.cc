#include "daemon/transport.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "daemon/log.h"

namespace ninf::daemon {

bool Transport::StartTls(const tls::Context &tls) {
  tls_ = true;
  ssl_.reset(SSL_new(tls.get()));
  if (!ssl_ || SSL_set_fd(ssl_.get(), fd_) != 1) {
    spdlog::error("event=connection_error conn={} error={}", conn_id_,
                  Quoted(tls::TakeErrors("SSL_new failed")));
    return false;
  }
  SSL_set_accept_state(ssl_.get());
  return true;
}

ssize_t Transport::Read(void *buf, std::size_t n) {
  if (!ssl_) return ::recv(fd_, buf, n, MSG_DONTWAIT);
  ERR_clear_error();
  std::size_t got = 0;
  const int r = SSL_read_ex(ssl_.get(), buf, n, &got);
  return r == 1 ? static_cast<ssize_t>(got) : TlsFailure(r, /*reading=*/true);
}

ssize_t Transport::Write(const void *buf, std::size_t n) {
  if (!ssl_) return ::send(fd_, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
  ERR_clear_error();
  std::size_t put = 0;
  const int r = SSL_write_ex(ssl_.get(), buf, n, &put);
  return r == 1 ? static_cast<ssize_t>(put) : TlsFailure(r, /*reading=*/false);
}

bool Transport::HasPending() const { return ssl_ && SSL_has_pending(ssl_.get()); }

ssize_t Transport::TlsFailure(int r, bool reading) {
  // As recv() and send() would say it: -1 with EAGAIN to wait, 0 for the
  // end of a read, -1 with errno for an error.
  switch (SSL_get_error(ssl_.get(), r)) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
      errno = EAGAIN;
      return -1;
    case SSL_ERROR_SYSCALL:
      if (reading && (errno == 0 || errno == EAGAIN)) return 0;
      if (errno == 0) errno = EPIPE;
      return -1;
    case SSL_ERROR_ZERO_RETURN:
      if (reading) return 0;
      [[fallthrough]];
    default:
      spdlog::debug("event=tls_error conn={} peer={} error={}", conn_id_, peer_,
                    Quoted(tls::TakeErrors("TLS error")));
      errno = EPROTO;
      return -1;
  }
}

Transport::Handshake Transport::ContinueHandshake(bool plaintext_allowed) {
  if (!sniffed_) {
    // A plaintext client speaks first with a frame: it is told, in
    // plaintext, what it must set, rather than left with a handshake failure.
    unsigned char first[4];
    const ssize_t n = ::recv(fd_, first, sizeof first, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
      return Handshake::kWaiting;
    if (n <= 0) return Handshake::kFailed;
    if (static_cast<std::size_t>(n) < sizeof first && std::memcmp(first, "NINF", n) == 0)
      return Handshake::kWaiting;  // perhaps the start of a frame: wait for the rest
    sniffed_ = true;
    if (std::memcmp(first, "NINF", sizeof first) == 0) {
      if (plaintext_allowed)
        spdlog::debug("event=plaintext_client conn={} peer={}", conn_id_, peer_);
      else
        spdlog::info("event=tls_required conn={} peer={}", conn_id_, peer_);
      ssl_.reset();
      return Handshake::kPlaintextClient;
    }
  }
  ERR_clear_error();
  const int r = SSL_do_handshake(ssl_.get());
  if (r == 1) {
    peer_subject_ = tls::PeerSubject(ssl_.get());
    spdlog::debug("event=tls_established conn={} peer={} resumed={} subject={}", conn_id_, peer_,
                  SSL_session_reused(ssl_.get()) ? 1 : 0, Quoted(peer_subject_));
    handshake_wants_write_ = false;
    return Handshake::kDone;
  }
  const int err = SSL_get_error(ssl_.get(), r);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
    handshake_wants_write_ = err == SSL_ERROR_WANT_WRITE;
    return Handshake::kWaiting;
  }
  const long verify = SSL_get_verify_result(ssl_.get());
  spdlog::info("event=tls_handshake_failed conn={} peer={} error={}", conn_id_, peer_,
               Quoted(verify != X509_V_OK ? X509_verify_cert_error_string(verify)
                                          : tls::TakeErrors("the peer closed the connection")));
  ERR_clear_error();
  return Handshake::kFailed;
}

bool Transport::RefuseClientHello(const void *first, ssize_t n) {
  if (tls_ || sniffed_) return false;
  sniffed_ = true;
  if (n < 2 || !tls::LooksLikeClientHello(static_cast<const uint8_t *>(first))) return false;
  spdlog::info("event=tls_refused conn={} peer={}", conn_id_, peer_);
  return true;
}

void Transport::Shutdown() {
  if (ssl_) (void)SSL_shutdown(ssl_.get());  // close_notify, best effort
}

void Transport::Seal() {
  ssl_.reset();
  sealed_ = true;
}

}  // namespace ninf::daemon
