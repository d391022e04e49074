#include "client/interfaces.h"

#include <map>
#include <mutex>

#include "client/connect.h"
#include "protocol/ask.h"

namespace ninf::client {
namespace {

std::mutex g_interfaces_mutex;
std::map<std::string, InterfacePtr> g_cache;

std::string Key(const ServerAddress &server, const std::string &function) {
  return server.Key() + "/" + function;
}

}  // namespace

InterfacePtr CachedInterface(const ServerAddress &server, const std::string &function) {
  std::lock_guard<std::mutex> lock(g_interfaces_mutex);
  auto it = g_cache.find(Key(server, function));
  return it == g_cache.end() ? nullptr : it->second;
}

Status GetInterface(const ServerAddress &server, const std::string &function, Channel &ch,
                    InterfacePtr *out) {
  if ((*out = CachedInterface(server, function))) return Status::Ok();
  wire::QueryInterface q;
  q.set_name(function);
  wire::InterfaceReply reply;
  NINF_RETURN_IF_ERROR(Ask(ch, q, &reply));
  Status st = ValidateInterface(reply.iface());
  if (!st.ok())
    return Status(st.code(), "server sent a bad interface for '" + function + "': " + st.message());
  if (reply.iface().name() != function)
    return Status(NINF_ERR_PROTOCOL,
                  "asked for '" + function + "', server described '" + reply.iface().name() + "'");
  auto iface = std::make_shared<const wire::FunctionInterface>(std::move(*reply.mutable_iface()));
  std::lock_guard<std::mutex> lock(g_interfaces_mutex);
  g_cache[Key(server, function)] = iface;
  // A server on this host (reached over loopback) that offers a
  // Unix-domain socket: later connections take it (ConnectToServer).
  if (!reply.unix_socket().empty() && reply.unix_socket()[0] == '/' && reply.server_pid() > 0 &&
      !ch.local() && PeerIsLoopback(ch.fd()))
    RememberSameHostPath(server, reply.unix_socket(), static_cast<int>(reply.server_pid()));
  *out = iface;
  return Status::Ok();
}

}  // namespace ninf::client
