#include "client/connect.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include "client/options.h"
#include "ninf.pb.h"
#include "protocol/auth.h"

namespace ninf::client {
namespace {

// Same-host paths learned from servers reached over loopback TCP: their
// Unix-domain socket and the pid that must be listening on it.
struct SameHostPath {
  std::string path;
  int pid = 0;
};

std::mutex g_connect_mutex;
std::map<std::string, SameHostPath> g_same_host;

// One TLS context per set of files, for the life of the process: loading
// the trust anchors costs more than a resumed handshake. (The tickets of
// resumed sessions are kept in protocol/tls.cc, per server.)
std::map<std::string, tls::Context> g_tls_contexts;

Status TlsContextFor(const ClientOptions &o, tls::Context *out) {
  const std::string key = o.tls_ca + '\n' + o.tls_cert + '\n' + o.tls_key;
  std::lock_guard<std::mutex> lock(g_connect_mutex);
  auto it = g_tls_contexts.find(key);
  if (it == g_tls_contexts.end()) {
    tls::Context ctx;
    NINF_RETURN_IF_ERROR(
        tls::MakeClientContext({.ca = o.tls_ca, .cert = o.tls_cert, .key = o.tls_key}, &ctx));
    it = g_tls_contexts.emplace(key, std::move(ctx)).first;
  }
  *out = it->second;
  return Status::Ok();
}

// The TLS handshake with ninfd on `fd`, into *ch. A server that answered
// in plaintext has its own message shown.
Status StartTls(const ClientOptions &o, const ServerAddress &server, int fd,
                std::unique_ptr<Channel> *ch) {
  tls::Context ctx;
  NINF_RETURN_IF_ERROR(TlsContextFor(o, &ctx));
  tls::SslPtr ssl;
  bool plaintext = false;
  // Through a relay the certificate is the server's, not the relay's: it is
  // verified for the server's name (docs/relay.md), and the relay, which
  // only moves the bytes, never sees them in the clear.
  const std::string &name = server.relay_name.empty() ? server.host : server.relay_name;
  Status st = tls::Connect(ctx, fd, name, server.port, o.connect_timeout_ms, &ssl, &plaintext,
                           o.tls_resume);
  if (st.ok()) {
    (*ch)->UseTls(std::move(ssl));
    return st;
  }
  if (plaintext) {
    // Its answer is a plaintext FRAME_ERROR (daemon/connection.h).
    (*ch)->set_timeout_ms(1000);
    FrameHeader h;
    wire::Error err;
    if ((*ch)->RecvHeader(1 << 20, &h).ok() && h.type == FRAME_ERROR &&
        (*ch)->RecvMessage(h, &err).ok()) {
      // Through a relay, a plaintext answer other than a protocol error is
      // the relay's own refusal, given before the server was reached (no
      // such server, too many waiting, no dial-back): not a server without
      // TLS. (A plaintext ninfd behind it says the bytes were no frame.)
      if (!server.relay_name.empty() && ErrorFromWire(err.code()) != NINF_ERR_PROTOCOL)
        return Status(ErrorFromWire(err.code()), "the relay at " + server.host + ":" +
                                                     std::to_string(server.port) +
                                                     " refused the connection to '" +
                                                     server.relay_name + "': " + err.message());
      return Status(st.code(), st.message() + "; it said: " + err.message());
    }
  }
  return st;
}

// A connection to `path` whose peer is ninfd `pid` (the server named the
// path itself; the pid check refuses a socket someone else put there).
bool ConnectSameHost(const SameHostPath &same, int *fd) {
  if (!ConnectUnix(same.path, fd).ok()) return false;
  if (PeerPid(*fd) == same.pid) return true;
  ::close(*fd);
  return false;
}

}  // namespace

void RememberSameHostPath(const ServerAddress &server, const std::string &path, int pid) {
  std::lock_guard<std::mutex> lock(g_connect_mutex);
  g_same_host[server.Key()] = {path, pid};
}

namespace {

// The same-host path a connection to `server` takes, if any.
std::optional<SameHostPath> SameHostPathFor(const ClientOptions &o, const ServerAddress &server,
                                            bool tcp_only) {
  // A server behind a relay has no same-host path of its own to offer.
  if (o.transport == ClientOptions::Transport::kTcp || tcp_only || !server.unix_path.empty() ||
      !server.relay_name.empty())
    return std::nullopt;
  std::lock_guard<std::mutex> lock(g_connect_mutex);
  auto it = g_same_host.find(server.Key());
  if (it == g_same_host.end()) return std::nullopt;
  return it->second;
}

// ConnectToServer and ConnectToMetaserver: `advise` appends what to change
// when the connection itself fails.
Status Connect(const ServerAddress &server, std::unique_ptr<Channel> *out, bool tcp_only,
               bool advise) {
  ClientOptions o;
  NINF_RETURN_IF_ERROR(CheckedOptions(&o));
  auth::KeyRing keys;
  if (!o.key_file.empty()) NINF_RETURN_IF_ERROR(auth::LoadKeyFile(o.key_file, &keys));
  int fd = -1;
  const std::optional<SameHostPath> same = SameHostPathFor(o, server, tcp_only);
  Status connected;
  if (!server.unix_path.empty())
    connected = ConnectUnix(server.unix_path, &fd);
  else if (!same || !ConnectSameHost(*same, &fd))  // TCP also when the path fails
    connected = ConnectTcp(server.host, server.port, o.connect_timeout_ms, &fd);
  // "Connection refused" alone does not say which setting chose the
  // address: the advice names it and how to change it. Only a connect that
  // failed gets it (not an interrupted one, nor a malformed address).
  if (!connected.ok())
    return advise && connected.code() == NINF_ERR_CONNECT
               ? Status(connected.code(), connected.message() + UnreachableAdvice(server))
               : connected;
  auto ch = std::make_unique<Channel>(fd, o.session_timeout_ms);
  if (!server.relay_name.empty()) {
    // The relay's one frame: which server. From here on the bytes go to
    // that server and back; a relay that cannot join us answers FRAME_ERROR
    // in place of the server's first reply (docs/relay.md).
    wire::RelayOpen open;
    open.set_name(server.relay_name);
    if (Status st = ch->SendFrame(FRAME_RELAY_OPEN, &open); !st.ok())
      return Status(st.code(), "asking the relay " + server.host + ":" +
                                   std::to_string(server.port) + " for '" + server.relay_name +
                                   "': " + st.message());
  }
  if (!o.tls_ca.empty() && !ch->local()) NINF_RETURN_IF_ERROR(StartTls(o, server, fd, &ch));
  if (!keys.keys.empty()) {
    Status st = auth::AuthenticateToServer(*ch, keys.keys[0]);
    if (!st.ok())
      return Status(st.code(), "authenticating to " + server.Key() + ": " + st.message());
  }
  *out = std::move(ch);
  return Status::Ok();
}

}  // namespace

Status ConnectToServer(const ServerAddress &server, std::unique_ptr<Channel> *out, bool tcp_only) {
  return Connect(server, out, tcp_only, true);
}

Status ConnectToMetaserver(const ServerAddress &meta, std::unique_ptr<Channel> *out) {
  return Connect(meta, out, false, false);
}

bool TakesSameHostPath(const ServerAddress &server) {
  ClientOptions o;
  return CheckedOptions(&o).ok() && SameHostPathFor(o, server, false).has_value();
}

Status TakeHandover(Channel &ch) {
  wire::Handover handover;
  FrameHeader h;
  NINF_RETURN_IF_ERROR(ch.RecvReply(FRAME_HANDOVER, 0, &handover, &h));
  if (h.payload_length != 0 || handover.psk().size() != tls::kPskSize)
    return Status(NINF_ERR_PROTOCOL, "ninfd's HANDOVER carries no valid key");
  tls::Psk psk;
  std::memcpy(psk.data(), handover.psk().data(), psk.size());
  tls::SslPtr ssl;
  Status st = tls::PskConnect(ch.fd(), psk, tls::PskKeyExchange::kKeyAlone, ch.timeout_ms(), &ssl);
  std::memset(psk.data(), 0, psk.size());
  if (!st.ok()) return Status(st.code(), "TLS with the executable: " + st.message());
  ch.UseTls(std::move(ssl));  // ninfd's session is done with, without a close_notify
  return Status::Ok();
}

Status FollowRedirect(Channel &ch) {
  wire::Redirect redirect;
  FrameHeader h;
  NINF_RETURN_IF_ERROR(ch.RecvReply(FRAME_REDIRECT, 0, &redirect, &h));
  if (redirect.port() == 0 || redirect.port() > 65535 || redirect.host().empty())
    return Status(NINF_ERR_PROTOCOL, "ninfd redirected the call to no address");
  const ClientOptions o = Options();
  int fd = -1;
  Status st =
      ConnectTcp(redirect.host(), static_cast<int>(redirect.port()), o.connect_timeout_ms, &fd);
  if (!st.ok())
    return Status(st.code(), "connecting to the executable at " + redirect.host() + ":" +
                                 std::to_string(redirect.port()) + ": " + st.message());
  NINF_RETURN_IF_ERROR(ch.Replace(fd));
  // ninfd's session carried a key: the claim and the arrays go inside a
  // session with rank 0 keyed by it (protocol/launch.h).
  if (!redirect.psk().empty()) {
    if (redirect.psk().size() != tls::kPskSize)
      return Status(NINF_ERR_PROTOCOL, "ninfd's REDIRECT carries no valid key");
    tls::Psk psk;
    std::memcpy(psk.data(), redirect.psk().data(), psk.size());
    tls::SslPtr ssl;
    st = tls::PskConnect(ch.fd(), psk, tls::PskKeyExchange::kKeyAlone, ch.timeout_ms(), &ssl);
    std::memset(psk.data(), 0, psk.size());
    if (!st.ok())
      return Status(st.code(), "TLS with the executable at " + redirect.host() + ":" +
                                   std::to_string(redirect.port()) + ": " + st.message());
    ch.UseTls(std::move(ssl));
  }
  wire::Claim claim;
  claim.set_token(redirect.token());
  return ch.SendFrame(FRAME_CLAIM, &claim);
}

void CloseWithoutTimeWait(Channel &ch) {
  if (ch.local() || ch.fd() < 0) return;  // Unix-domain sockets have no TIME_WAIT
  const linger reset{.l_onoff = 1, .l_linger = 0};
  (void)::setsockopt(ch.fd(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
}

}  // namespace ninf::client
