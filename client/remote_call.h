// One one-shot remote call, in two steps so that Ninf_call_async can return
// as soon as the argument list has been read:
//   Prepare  resolves the server, opens the connection, fetches (or takes
//            from the cache) the interface, reads the arguments and computes
//            the array sizes: everything that needs the caller's stack;
//   Execute  sends CALL + ARGS (arrays straight from the caller's memory)
//            and receives the RESULT straight into the caller's OUT arrays.
// Layering (STYLE, after Mercury): protocol/wire.h (frames) -> arguments.h
// (marshalling) -> this file and handle.h (calls) -> api.cc, grpc_api.cc.
#pragma once

#include <stdarg.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "arguments.h"
#include "server_address.h"

namespace ninf::client {

class RemoteCall {
 public:
  // From C varargs, in IDL order.
  Status Prepare(const char *name, va_list *ap);
  // From a language binding (ninf_binding.h).
  Status PrepareBinding(const char *name, const ninf_binding_args *binding);

  Status Execute();

  // Aborts a running Execute from another thread: the connection is shut
  // down, ninfd sees the hang-up and kills the executable.
  void Cancel();

 private:
  Status Open(const char *name);

  ServerAddress server_;
  std::string function_;
  std::unique_ptr<Channel> channel_;
  ArgumentList arguments_;
  std::mutex channel_mutex_;  // Cancel against the end of Execute
};

// A client-chosen id for the server's log.
uint64_t NextCallId();

// The CALL frame that starts `function` on its server, with a fresh call id
// and the client's heartbeat setting.
wire::CallRequest MakeCallRequest(const std::string &function, bool persistent);

}  // namespace ninf::client
