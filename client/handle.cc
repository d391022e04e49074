#include "client/handle.h"

#include <poll.h>

#include "client/connect.h"
#include "client/exchange.h"
#include "client/interfaces.h"
#include "client/remote_call.h"
#include "protocol/ask.h"

namespace ninf::client {

Status FunctionHandle::Init(const ServerAddress &server, const std::string &function) {
  if (function.empty()) return Status(NINF_ERR_INVALID_ARGUMENT, "empty function name");
  server_ = server;
  function_ = function;
  // Always ask the server, even with the interface cached: a handle promises
  // that its server is there and serves the function.
  std::unique_ptr<Channel> ch;
  NINF_RETURN_IF_ERROR(ConnectToServer(server_, &ch));
  wire::ListReply list;
  NINF_RETURN_IF_ERROR(Ask(*ch, wire::ListRequest(), &list));
  bool served = false;
  for (const std::string &name : list.names()) served = served || name == function_;
  if (!served)
    return Status(NINF_ERR_FUNCTION_NOT_FOUND,
                  "'" + function_ + "' is not served by " + server_.Key());
  return GetInterface(server_, function_, *ch, &iface_);
}

namespace {

// Between calls nothing arrives on a handle's connection unless its
// executable is gone: ninfd then wrote why (NINF_ERR_EXPIRED for an idle
// executable it stopped, NINF_ERR_SHUTTING_DOWN) and closed, or the
// executable simply exited. Ok when the connection is quiet; EXPIRED when a
// new executable can serve the next call; any other error as the server
// said it.
Status IdleConnectionState(Channel &ch) {
  pollfd p{ch.fd(), POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return Status::Ok();
  wire::Result unexpected;
  FrameHeader h;
  Status st = ch.RecvReply(FRAME_RESULT, 0, &unexpected, &h);
  if (st.code() == NINF_ERR_EXPIRED || st.code() == NINF_ERR_COMMUNICATION)
    return Status(NINF_ERR_EXPIRED, st.message());
  if (st.ok()) return Status(NINF_ERR_PROTOCOL, "a result arrived that no call asked for");
  return st;
}

}  // namespace

Status FunctionHandle::Call(const ArgumentList &list, CancelToken *cancel) {
  std::lock_guard<std::mutex> call_lock(call_mutex_);
  if (channel_) {
    // An executable the server stopped while idle is replaced transparently:
    // nothing of this call was sent yet.
    Status idle = IdleConnectionState(*channel_);
    if (!idle.ok()) channel_.reset();
    if (!idle.ok() && idle.code() != NINF_ERR_EXPIRED) return idle;
  }
  const bool fresh = !channel_;
  Status st = Send(list, cancel);
  // The server stopped the idle executable just as this call came (its
  // idle-handle budget): the routine never began, ninfd says so with
  // NINF_ERR_EXPIRED, and the call goes once more, to a new executable.
  if (st.code() == NINF_ERR_EXPIRED && !fresh) st = Send(list, cancel);
  return st;
}

Status FunctionHandle::Send(const ArgumentList &list, CancelToken *cancel) {
  std::unique_ptr<wire::CallRequest> preamble;
  if (!channel_) {
    NINF_RETURN_IF_ERROR(ConnectToServer(server_, &channel_));
    preamble = std::make_unique<wire::CallRequest>(MakeCallRequest(function_, true));
  }
  // A cancel that came first ends the call here; the executable (if any)
  // stays for the handle's next call.
  if (cancel && !cancel->Attach(channel_->fd())) {
    if (preamble) channel_.reset();  // a fresh connection nothing was sent on
    return Status(NINF_ERR_CANCELLED, "the call was cancelled before it started");
  }
  Status st = ExchangeArguments(*channel_, list, preamble.get());
  if (cancel) cancel->Detach();
  if (!st.ok()) channel_.reset();  // the executable is gone after any failure
  return st;
}

void FunctionHandle::Close() {
  std::lock_guard<std::mutex> call_lock(call_mutex_);
  if (!channel_) return;
  wire::End end;
  (void)channel_->SendFrame(FRAME_END, &end);  // the executable may already be gone
  channel_.reset();
}

}  // namespace ninf::client
