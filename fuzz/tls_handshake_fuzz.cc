// ninfd's TLS server side on a stranger's first flight: the context
// tls::MakeServerContext builds from tls_cert/tls_key (and tls_client_ca
// for mutual TLS), accepting over memory BIOs the way daemon/connection.cc
// drives SSL_do_handshake, and the first-bytes classification a listener
// makes (tls::LooksLikeClientHello, the "NINF" frame magic).
//
// Input: byte 0 picks the context (bit 0: mutual TLS) and the size of the
// cuts the rest arrives in (bits 1-7: 1 to 128 bytes); the rest is what the
// client sent. A real ClientHello is in fuzz/corpus/tls_handshake_fuzz.
//
// Properties: the handshake never completes (completing needs the server's
// own ephemeral key or a ticket sealed with its key, neither of which the
// input can hold); what the server answers stays under 64 KiB; a failed
// handshake leaves nothing in OpenSSL's error queue once taken; every
// SSL object is freed (LeakSanitizer).
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "fuzz/fuzz_check.h"
#include "protocol/tls.h"

namespace {

// The server's first flight (ServerHello .. Finished with a P-256
// certificate) is a few KiB; anything near this would be a runaway.
constexpr std::size_t kMaxServerOutput = 64 * 1024;

// A memfd holding `pem`, named by its /proc path: MakeServerContext takes
// file names, and the fuzzer writes nothing on disk.
std::string MemFile(const char *name, const std::string &pem) {
  const int fd = ::memfd_create(name, 0);
  FUZZ_CHECK(fd >= 0, "memfd_create");
  FUZZ_CHECK(::write(fd, pem.data(), pem.size()) == static_cast<ssize_t>(pem.size()), "write");
  return "/proc/self/fd/" + std::to_string(fd);  // kept open for the process
}

std::string Pem(int (*write)(BIO *, void *), void *object) {
  BIO *bio = BIO_new(BIO_s_mem());
  FUZZ_CHECK(bio && write(bio, object) == 1, "PEM write");
  char *data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  return out;
}

// A self-signed P-256 certificate for 127.0.0.1, made once.
struct Credentials {
  std::string cert;
  std::string key;
};

Credentials MakeCredentials() {
  EVP_PKEY *key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  FUZZ_CHECK(key, "keygen");
  X509 *x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 86400L * 365);
  X509_NAME *name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char *>("fuzz"), -1, -1, 0);
  X509_set_issuer_name(x, name);
  X509_set_pubkey(x, key);
  FUZZ_CHECK(X509_sign(x, key, EVP_sha256()) > 0, "X509_sign");
  Credentials c{
      .cert = Pem([](BIO *b, void *o) { return PEM_write_bio_X509(b, static_cast<X509 *>(o)); }, x),
      .key = Pem(
          [](BIO *b, void *o) {
            return PEM_write_bio_PrivateKey(b, static_cast<EVP_PKEY *>(o), nullptr, nullptr, 0,
                                            nullptr, nullptr);
          },
          key)};
  X509_free(x);
  EVP_PKEY_free(key);
  return c;
}

ninf::tls::Context g_contexts[2];  // plain TLS, mutual TLS

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  ninf::tls::WarmUp();
  const Credentials c = MakeCredentials();
  const std::string cert = MemFile("cert", c.cert);
  const std::string key = MemFile("key", c.key);
  ninf::Status st = ninf::tls::MakeServerContext({.cert = cert, .key = key}, &g_contexts[0]);
  FUZZ_CHECK(st.ok(), st.ToString().c_str());
  st = ninf::tls::MakeServerContext({.cert = cert, .key = key, .client_ca = cert}, &g_contexts[1]);
  FUZZ_CHECK(st.ok(), st.ToString().c_str());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
  if (size < 1) return 0;
  const bool mutual = data[0] & 1;
  const std::size_t cut = (data[0] >> 1) + 1;
  data++;
  size--;

  // The listener's classification: a TLS record start, a plaintext frame
  // ("NINF"), or neither; never both.
  if (size >= 4) {
    const bool hello = ninf::tls::LooksLikeClientHello(data);
    FUZZ_CHECK(hello == (data[0] == 0x16 && data[1] == 0x03), "LooksLikeClientHello");
    FUZZ_CHECK(!(hello && std::memcmp(data, "NINF", 4) == 0), "TLS and a frame at once");
  }

  SSL *ssl = SSL_new(g_contexts[mutual].get());
  FUZZ_CHECK(ssl, "SSL_new");
  BIO *in = BIO_new(BIO_s_mem());
  BIO *out = BIO_new(BIO_s_mem());
  FUZZ_CHECK(in && out, "BIO_new");
  BIO_set_mem_eof_return(in, -1);  // empty: "retry", as a non-blocking socket
  SSL_set_bio(ssl, in, out);
  SSL_set_accept_state(ssl);

  std::size_t answered = 0;
  bool failed = false;
  for (std::size_t at = 0; at < size && !failed;) {
    const std::size_t n = std::min(cut, size - at);
    FUZZ_CHECK(BIO_write(in, data + at, static_cast<int>(n)) == static_cast<int>(n), "BIO_write");
    at += n;
    ERR_clear_error();
    const int r = SSL_do_handshake(ssl);
    FUZZ_CHECK(r != 1, "a handshake completed from the client's bytes alone");
    const int err = SSL_get_error(ssl, r);
    if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) {
      failed = true;
      // What daemon/connection.cc logs: the queue as one line, then empty.
      (void)ninf::tls::TakeErrors("the peer closed the connection");
      FUZZ_CHECK(ERR_peek_error() == 0, "TakeErrors left errors queued");
    }
    char sink[4096];
    for (int m; (m = BIO_read(out, sink, sizeof sink)) > 0;)
      answered += static_cast<std::size_t>(m);
    FUZZ_CHECK(answered <= kMaxServerOutput, "the server's answer is runaway");
  }
  SSL_free(ssl);  // frees both BIOs
  ERR_clear_error();
  return 0;
}
