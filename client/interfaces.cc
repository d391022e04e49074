#include "client/interfaces.h"

#include <unistd.h>

#include <map>
#include <mutex>
#include <optional>

#include "client/options.h"
#include "protocol/auth.h"

namespace ninf::client {
namespace {

std::mutex g_mutex;
std::map<std::string, InterfacePtr> g_cache;

// Same-host paths learned from servers reached over loopback TCP: their
// Unix-domain socket and the pid that must be listening on it.
struct SameHostPath {
  std::string path;
  int pid = 0;
};
std::map<std::string, SameHostPath> g_same_host;

// A connection to `path` whose peer is ninfd `pid` (the server named the
// path itself; the pid check refuses a socket someone else put there).
bool ConnectSameHost(const SameHostPath &same, int *fd) {
  if (!ConnectUnix(same.path, fd).ok()) return false;
  if (PeerPid(*fd) == same.pid) return true;
  ::close(*fd);
  return false;
}

std::string Key(const ServerAddress &server, const std::string &function) {
  return server.Key() + "/" + function;
}

}  // namespace

InterfacePtr CachedInterface(const ServerAddress &server, const std::string &function) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_cache.find(Key(server, function));
  return it == g_cache.end() ? nullptr : it->second;
}

Status ConnectToServer(const ServerAddress &server, std::unique_ptr<Channel> *out, bool tcp_only) {
  ClientOptions o;
  NINF_RETURN_IF_ERROR(CheckedOptions(&o));
  auth::KeyRing keys;
  if (!o.key_file.empty()) NINF_RETURN_IF_ERROR(auth::LoadKeyFile(o.key_file, &keys));
  int fd = -1;
  std::optional<SameHostPath> same;
  if (o.transport != ClientOptions::Transport::kTcp && !tcp_only && server.unix_path.empty()) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (auto it = g_same_host.find(server.Key()); it != g_same_host.end()) same = it->second;
  }
  if (!server.unix_path.empty())
    NINF_RETURN_IF_ERROR(ConnectUnix(server.unix_path, &fd));
  else if (!same || !ConnectSameHost(*same, &fd))  // TCP also when the path fails
    NINF_RETURN_IF_ERROR(ConnectTcp(server.host, server.port, o.connect_timeout_ms, &fd));
  auto ch = std::make_unique<Channel>(fd, o.session_timeout_ms);
  if (!keys.keys.empty()) {
    Status st = auth::AuthenticateToServer(*ch, keys.keys[0]);
    if (!st.ok())
      return Status(st.code(), "authenticating to " + server.Key() + ": " + st.message());
  }
  *out = std::move(ch);
  return Status::Ok();
}

Status GetInterface(const ServerAddress &server, const std::string &function, Channel &ch,
                    InterfacePtr *out) {
  if ((*out = CachedInterface(server, function))) return Status::Ok();
  wire::QueryInterface q;
  q.set_name(function);
  NINF_RETURN_IF_ERROR(ch.SendFrame(FRAME_QUERY_INTERFACE, &q));
  wire::InterfaceReply reply;
  FrameHeader h;
  NINF_RETURN_IF_ERROR(ch.RecvReply(FRAME_INTERFACE, 0, &reply, &h));
  Status st = ValidateInterface(reply.iface());
  if (!st.ok())
    return Status(st.code(), "server sent a bad interface for '" + function + "': " + st.message());
  if (reply.iface().name() != function)
    return Status(NINF_ERR_PROTOCOL,
                  "asked for '" + function + "', server described '" + reply.iface().name() + "'");
  auto iface = std::make_shared<const wire::FunctionInterface>(std::move(*reply.mutable_iface()));
  std::lock_guard<std::mutex> lock(g_mutex);
  g_cache[Key(server, function)] = iface;
  // A server on this host (reached over loopback) that offers a
  // Unix-domain socket: later connections take it (ConnectToServer).
  if (!reply.unix_socket().empty() && reply.unix_socket()[0] == '/' && reply.server_pid() > 0 &&
      !ch.local() && PeerIsLoopback(ch.fd()))
    g_same_host[server.Key()] = {reply.unix_socket(), static_cast<int>(reply.server_pid())};
  *out = iface;
  return Status::Ok();
}

}  // namespace ninf::client
