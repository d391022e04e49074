// One remote call, in two steps so that Ninf_call_async can return as soon
// as the argument list has been read:
//   Prepare  resolves the server, opens the connection, fetches (or takes
//            from the cache) the interface, reads the varargs and computes
//            the array sizes: everything that needs the caller's stack;
//   Execute  sends CALL + ARGS (arrays straight from the caller's memory)
//            and receives the RESULT straight into the caller's OUT arrays.
// Layering (STYLE, after Mercury): protocol/wire.h (frames) -> this file
// (marshalling) -> api.cc (public C API).
#pragma once

#include <stdarg.h>

#include <memory>
#include <string>
#include <vector>

#include "call_args.h"
#include "layout.h"
#include "server_address.h"
#include "status.h"
#include "wire.h"

namespace ninf::client {

class RemoteCall {
 public:
  Status Prepare(const char *name, va_list *ap);
  Status Execute();

  const std::string &function() const { return function_; }

 private:
  Status Connect();
  Status FetchInterface();
  Status BuildArguments(va_list *ap);

  ServerAddress server_;
  std::string function_;
  std::unique_ptr<Channel> channel_;
  std::shared_ptr<const wire::FunctionInterface> iface_;
  std::vector<ninf_argvalue> values_;
  wire::Args args_;
  CallLayout layout_;
  uint64_t call_id_ = 0;
};

// Drops every cached interface (tests; a server that was re-registered).
void ClearInterfaceCache();

}  // namespace ninf::client
