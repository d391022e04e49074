#include "remote_call.h"

#include <sys/socket.h>

#include <atomic>
#include <random>

#include "cancel_token.h"
#include "interfaces.h"
#include "options.h"

namespace ninf::client {

uint64_t NextCallId() {
  // Random high bits tell apart the calls of different client processes in
  // the server's log.
  static std::atomic<uint64_t> next{(std::random_device{}() & 0xffffull) << 32};
  return ++next;
}

wire::CallRequest MakeCallRequest(const std::string &function, bool persistent) {
  wire::CallRequest req;
  req.set_name(function);
  req.set_call_id(NextCallId());
  req.set_persistent(persistent);
  req.set_heartbeat_ms(static_cast<uint32_t>(HeartbeatMs(Options())));
  return req;
}

Status RemoteCall::Open(const char *name) {
  NINF_RETURN_IF_ERROR(ResolveName(name, &server_, &function_));
  return ConnectToServer(server_, &channel_);
}

Status RemoteCall::Prepare(const char *name, va_list *ap) {
  NINF_RETURN_IF_ERROR(Open(name));
  InterfacePtr iface;
  NINF_RETURN_IF_ERROR(GetInterface(server_, function_, *channel_, &iface));
  return arguments_.Build(iface, CollectVarargs(*iface, ap));
}

Status RemoteCall::PrepareBinding(const char *name, const ninf_binding_args *binding) {
  NINF_RETURN_IF_ERROR(Open(name));
  InterfacePtr iface;
  NINF_RETURN_IF_ERROR(GetInterface(server_, function_, *channel_, &iface));
  return BuildFromBinding(iface, binding, &arguments_);
}

Status RemoteCall::Execute() {
  wire::CallRequest req = MakeCallRequest(function_, false);
  // CALL and ARGS go back to back: ninfd reads only the CALL frame and hands
  // the connection, ARGS included, to the executable.
  Status st = ExchangeArguments(*channel_, arguments_, &req);
  std::lock_guard<std::mutex> lock(channel_mutex_);
  channel_.reset();
  return st;
}

void RemoteCall::Cancel() {
  std::lock_guard<std::mutex> lock(channel_mutex_);
  if (channel_) AbortConnection(channel_->fd());
}

}  // namespace ninf::client
