// A function handle: one executable on its server, started by the first call
// (CALL with persistent = true) and reused by every later call on the same
// connection with no fork-exec; Close() ends it with FRAME_END. Calls on one
// handle are serialized. After a failed call the executable is gone (it
// exits on any error, or ninfd killed it), so the next call starts a new one:
// a handle recovers by itself.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "client/arguments.h"
#include "client/cancel_token.h"
#include "client/server_address.h"
#include "protocol/wire.h"

namespace ninf::client {

class FunctionHandle {
 public:
  ~FunctionHandle() { Close(); }

  // Checks that the server answers and serves `function`, and fetches its
  // interface. Errors: NINF_ERR_CONNECT, NINF_ERR_FUNCTION_NOT_FOUND.
  Status Init(const ServerAddress &server, const std::string &function);

  const ServerAddress &server() const { return server_; }
  const std::string &function() const { return function_; }
  const InterfacePtr &iface() const { return iface_; }

  // One call with a prepared argument list. With a `cancel` token the call
  // can be cancelled from another thread, even before it has started
  // (NINF_ERR_CANCELLED); the token is this call's only, so cancelling one
  // session never touches another session's call on the same handle.
  Status Call(const ArgumentList &list, CancelToken *cancel = nullptr);

  // Ends the executable (FRAME_END) and closes the connection.
  void Close();

 private:
  // One attempt: a connection and a new executable when the handle has
  // none, then the call's exchange; the channel is dropped after a failure.
  Status Send(const ArgumentList &list, CancelToken *cancel);

  ServerAddress server_;
  std::string function_;
  InterfacePtr iface_;
  std::mutex call_mutex_;  // one call at a time; guards channel_
  std::unique_ptr<Channel> channel_;
};

}  // namespace ninf::client
