#include "stubs/runtime/kept_data.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "protocol/address.h"
#include "protocol/numeric_connect.h"
#include "protocol/tls.h"
#include "protocol/wire.h"

namespace ninf::stub {
namespace {

// How long a fetch may take to connect and to answer between bytes.
constexpr int kFetchTimeoutMs = 30000;
// How long the listener may take to prove it is a ninfd: a ninfd answers
// at once, and a call should not hang on something else.
constexpr int kHandshakeTimeoutMs = 10000;

// A Unix-domain connection (not wire.h's ConnectUnix: connect.cc would pull
// getaddrinfo into the statically linked executable).
Status ConnectLocal(const std::string &path, int *out) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path)
    return Status(NINF_ERR_INVALID_ARGUMENT, "path too long");
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status(NINF_ERR_CONNECT, std::strerror(errno));
  if (::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd);
    return Status(NINF_ERR_CONNECT, std::strerror(err));
  }
  *out = fd;
  return Status::Ok();
}

Status WriteAll(int fd, const void *data, uint64_t bytes) {
  const char *p = static_cast<const char *>(data);
  while (bytes > 0) {
    ssize_t n = ::write(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status(NINF_ERR_NO_MEMORY, std::string("memfd: ") + std::strerror(errno));
    p += n;
    bytes -= static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Status FillRandom(uint8_t *p, std::size_t n) {
  while (n > 0) {
    const ssize_t got = ::getrandom(p, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return Status(NINF_ERR_INTERNAL, "no random bytes for a nonce");
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return Status::Ok();
}

// ninfd's answer to CTL_PROVE: the client proof in *proof, or its refusal.
Status AskProof(const FetchAuth &auth, ControlMsg *prove) {
  prove->kind = CTL_PROVE;
  prove->call_id = auth.call_id;
  if (SendControl(auth.control_fd, *prove) != 0)
    return Status(NINF_ERR_SERVER, "ninfd went away during the fetch");
  for (;;) {
    ControlMsg answer;
    const int got = RecvControl(auth.control_fd, &answer, nullptr);
    if (got < 0 && errno == EINTR) continue;
    if (got != 1) return Status(NINF_ERR_SERVER, "ninfd went away during the fetch");
    if (answer.kind != CTL_PROVED) continue;  // a late probe
    if (answer.error_code != NINF_OK)
      return Status(NINF_ERR_AUTH,
                    "it did not prove that it is a ninfd holding the caller's key, and is "
                    "refused (a data reference may name only such a server)");
    std::memcpy(prove->proof, answer.proof, sizeof prove->proof);
    return Status::Ok();
  }
}

// ninfd's word on whether the call may dial `where` at all (a server the
// call's block can have used: server/fetch_policy.h), asked before any
// connection: a data reference is the client's text.
// One CTL_FETCH_ASK: ninfd's error_code, or NINF_ERR_SERVER when it is gone.
int AskOnce(const FetchAuth &auth, const ControlMsg &ask) {
  if (SendControl(auth.control_fd, ask) != 0) return NINF_ERR_SERVER;
  for (;;) {
    ControlMsg answer;
    const int got = RecvControl(auth.control_fd, &answer, nullptr);
    if (got < 0 && errno == EINTR) continue;
    if (got != 1) return NINF_ERR_SERVER;
    if (answer.kind == CTL_FETCH_ANSWER) return answer.error_code;  // else a late probe
  }
}

Status AskMayFetch(const FetchAuth &auth, const std::string &where) {
  if (auth.control_fd < 0) return Status::Ok();  // started by hand: no ninfd, no strangers' calls
  ControlMsg ask;
  ask.kind = CTL_FETCH_ASK;
  ask.call_id = auth.call_id;
  if (where.empty() || where.size() >= sizeof ask.fetch_address)
    return Status(NINF_ERR_INVALID_ARGUMENT, "kept data at '" + where + "': not an address");
  std::memcpy(ask.fetch_address, where.data(), where.size());
  // "Not yet listed" (NINF_ERR_TIMEOUT): ninfd is fetching a fresh list of
  // its metaserver's servers; a server that registered a moment ago is on it.
  constexpr int kListWaitMs = 3000, kAgainMs = 50;
  int code = AskOnce(auth, ask);
  for (int waited = 0; code == NINF_ERR_TIMEOUT && waited < kListWaitMs; waited += kAgainMs) {
    ::usleep(kAgainMs * 1000);
    code = AskOnce(auth, ask);
  }
  if (code == NINF_OK) return Status::Ok();
  if (code == NINF_ERR_SERVER) return Status(NINF_ERR_SERVER, "ninfd went away during the fetch");
  return Status(NINF_ERR_AUTH,
                "kept data at " + where +
                    ": this server's calls read kept data only from itself, the servers its "
                    "metaserver lists and the ones of its fetch_from setting (ask its "
                    "operator to add this one to fetch_from)");
}

// The authentication exchange as the call's client (protocol/auth.h), with
// ninfd holding the key: FRAME_AUTH out, the CHALLENGE checked by ninfd,
// FRAME_PROOF back. Only the key id and a fresh nonce reach the listener
// before it has proved itself.
Status Authenticate(Channel &ch, const FetchAuth &auth) {
  ControlMsg prove;
  NINF_RETURN_IF_ERROR(FillRandom(prove.client_nonce, sizeof prove.client_nonce));
  wire::AuthRequest request;
  request.set_key_id(auth.key_id);
  request.set_client_nonce(prove.client_nonce, sizeof prove.client_nonce);
  NINF_RETURN_IF_ERROR(ch.SendFrame(FRAME_AUTH, &request));
  wire::Challenge challenge;
  FrameHeader h;
  NINF_RETURN_IF_ERROR(ch.RecvReply(FRAME_CHALLENGE, 0, &challenge, &h));
  if (challenge.server_nonce().size() != sizeof prove.server_nonce ||
      challenge.server_proof().size() != sizeof prove.proof)
    return Status(NINF_ERR_AUTH, "its CHALLENGE is malformed: not a ninfd");
  std::memcpy(prove.server_nonce, challenge.server_nonce().data(), sizeof prove.server_nonce);
  std::memcpy(prove.proof, challenge.server_proof().data(), sizeof prove.proof);
  NINF_RETURN_IF_ERROR(AskProof(auth, &prove));
  wire::AuthProof answer;
  answer.set_client_proof(prove.proof, sizeof prove.proof);
  return ch.SendFrame(FRAME_PROOF, &answer);
}

// Without keys nothing can be proved; the listener must at least answer a
// PROBE as a ninfd does before it hears the entry's id and token.
Status CheckIsNinfd(Channel &ch) {
  NINF_RETURN_IF_ERROR(ch.SendFrame(FRAME_PROBE, nullptr));
  FrameHeader h;
  wire::Data empty;  // PROBE_REPLY has no message
  return ch.RecvReply(FRAME_PROBE_REPLY, 0, &empty, &h);
}

// A TLS ninfd takes only TLS on TCP: with NINF_TLS_CA (ninfd puts its
// tls_ca there, and its tls_cert/tls_key in NINF_TLS_CERT/NINF_TLS_KEY, for
// a server that asks for a client certificate) the fetch runs its handshake
// first, the keeping server verified for the address it was named by.
// Without, the fetch stays plaintext, as from a ninfd without tls_ca.
Status StartTls(Channel &ch, const HostPort &at) {
  const char *ca = std::getenv("NINF_TLS_CA");
  if (!ca || !*ca) return Status::Ok();
  const char *cert = std::getenv("NINF_TLS_CERT");
  const char *key = std::getenv("NINF_TLS_KEY");
  // One context for the process (fetches run one at a time, on the call's
  // thread): a reused executable fetches again, and its tickets resume.
  static tls::Context ctx;
  if (!ctx)
    NINF_RETURN_IF_ERROR(
        tls::MakeClientContext({.ca = ca, .cert = cert ? cert : "", .key = key ? key : ""}, &ctx));
  tls::SslPtr ssl;
  bool plaintext = false;
  Status st = tls::Connect(ctx, ch.fd(), at.host, at.port, kHandshakeTimeoutMs, &ssl, &plaintext);
  if (plaintext)
    return Status(NINF_ERR_CONNECT,
                  "it does not speak TLS (this server's tls_ca makes fetches TLS)");
  NINF_RETURN_IF_ERROR(st);
  ch.UseTls(std::move(ssl));
  return Status::Ok();
}

}  // namespace

Status FetchKept(const wire::DataRef &ref, const FetchAuth &auth, void *into) {
  const std::string &where = ref.address();
  NINF_RETURN_IF_ERROR(AskMayFetch(auth, where));
  int fd = -1;
  HostPort at;
  Status st = where.rfind("unix:", 0) == 0 ? ConnectLocal(where.substr(5), &fd)
              : !ParseHostPort(where, HostPort{}, &at).ok()
                  ? Status(NINF_ERR_INVALID_ARGUMENT, "not host:port")
                  : ConnectNumeric(at.host, at.port, kFetchTimeoutMs, &fd);
  if (!st.ok()) return Status(NINF_ERR_CONNECT, "kept data at " + where + ": " + st.message());
  Channel ch(fd, kHandshakeTimeoutMs);
  if (!at.host.empty()) st = StartTls(ch, at);
  if (st.ok()) st = auth.key_id.empty() ? CheckIsNinfd(ch) : Authenticate(ch, auth);
  if (!st.ok())
    return Status(
        st.code() == NINF_ERR_CONNECT ? NINF_ERR_CONNECT : NINF_ERR_AUTH,
        "kept data at " + where + ": not a ninfd this call may read from: " + st.message());
  ch.set_timeout_ms(kFetchTimeoutMs);
  wire::StoreKey key;
  key.set_id(ref.id());
  key.set_token(ref.token());
  st = ch.SendFrame(FRAME_FETCH, &key);
  wire::Data data;
  FrameHeader h;
  if (st.ok()) st = ch.RecvReply(FRAME_DATA, ref.bytes(), &data, &h);
  if (st.ok() && h.payload_length != ref.bytes())
    st = Status(NINF_ERR_PROTOCOL, "got " + std::to_string(h.payload_length) + " bytes, expected " +
                                       std::to_string(ref.bytes()));
  if (st.ok()) {
    iovec v{into, ref.bytes()};
    st = ch.RecvPayload(std::span<const iovec>(&v, 1));
  }
  if (!st.ok()) return Status(st.code(), "kept data at " + where + ": " + st.message());
  return Status::Ok();
}

Status BytesToMemfd(const void *data, uint64_t bytes, int *out) {
  const int fd = ::memfd_create("ninf-kept", MFD_CLOEXEC);
  if (fd < 0) return Status(NINF_ERR_NO_MEMORY, std::string("memfd: ") + std::strerror(errno));
  if (Status st = WriteAll(fd, data, bytes); !st.ok()) {
    ::close(fd);
    return st;
  }
  *out = fd;
  return Status::Ok();
}

Status FrameToMemfd(FrameType type, const google::protobuf::MessageLite &msg,
                    std::span<const iovec> payload, int *out, uint64_t *bytes) {
  uint64_t payload_bytes = 0;
  for (const iovec &v : payload) payload_bytes += v.iov_len;
  std::string head;
  AppendFrame(&head, type, &msg, payload_bytes);
  int fd = -1;
  NINF_RETURN_IF_ERROR(BytesToMemfd(head.data(), head.size(), &fd));
  for (const iovec &v : payload) {
    if (Status st = WriteAll(fd, v.iov_base, v.iov_len); !st.ok()) {
      ::close(fd);
      return st;
    }
  }
  *out = fd;
  *bytes = head.size() + payload_bytes;
  return Status::Ok();
}

Status KeepOnServer(int control_fd, uint64_t call_id, uint32_t param, int fd, uint64_t bytes,
                    uint64_t *id, std::string *token) {
  ControlMsg keep;
  keep.kind = CTL_KEEP;
  keep.call_id = call_id;
  keep.param = param;
  keep.bytes_out = bytes;
  const int sent = SendControl(control_fd, keep, fd);
  ::close(fd);  // ninfd has its own copy now
  if (sent != 0) return Status(NINF_ERR_SERVER, "ninfd went away before the data could be kept");
  if (param == kKeepWholeResult) return Status::Ok();
  for (;;) {
    ControlMsg answer;
    const int got = RecvControl(control_fd, &answer, nullptr);
    if (got < 0 && errno == EINTR) continue;
    if (got != 1) return Status(NINF_ERR_SERVER, "ninfd went away before the data was kept");
    if (answer.kind != CTL_KEPT) continue;  // a late probe
    if (answer.error_code != NINF_OK) {
      const int code = answer.error_code;
      return Status(ErrorFromWire(code), code == NINF_ERR_LIMIT
                                             ? "the server's store for kept data is full"
                                             : "the server could not keep the array");
    }
    *id = answer.store_id;
    token->assign(reinterpret_cast<const char *>(answer.token), sizeof answer.token);
    return Status::Ok();
  }
}

}  // namespace ninf::stub
