// One one-shot remote call, in two steps so that Ninf_call_async can return
// as soon as the argument list has been read:
//   Prepare  resolves the server, opens the connection, fetches (or takes
//            from the cache) the interface, reads the arguments and computes
//            the array sizes: everything that needs the caller's stack;
//   Execute  sends CALL + ARGS (arrays straight from the caller's memory)
//            and receives the RESULT straight into the caller's OUT arrays.
// With a metaserver (metaserver.h), Prepare asks it for the interface and
// Execute for the server, retrying on the next-ranked one when a server
// fails before any result byte.
// Layering (STYLE, after Mercury): protocol/wire.h (frames) -> connect.h
// (connections) and arguments.h (marshalling) -> exchange.h (the wire
// exchange of one call) and interfaces.h (the interface cache) -> this file
// and handle.h (calls) -> api.cc, grpc_api.cc.
#pragma once

#include <stdarg.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "client/arguments.h"
#include "client/exchange.h"
#include "client/ninf.h"
#include "client/server_address.h"

namespace ninf::client {

class RemoteCall {
 public:
  // From C varargs, in IDL order.
  Status Prepare(const char *name, va_list *ap);
  // From a language binding (ninf_binding.h).
  Status PrepareBinding(const char *name, const ninf_binding_args *binding);

  Status Execute();

  // What the call would move and compute, without making it (Ninf_estimate):
  // the interface from the cache, or fetched once (the connection is then
  // closed at once), and the arguments read and sized as Prepare does.
  // Fills out->server, work_flops, send_bytes and recv_bytes.
  Status Estimate(const char *name, va_list *ap, Ninf_call_info *out);

  // A two-phase call's first half (docs/transactions.md): the arguments go
  // to the server (placed like Execute's), which answers a ticket; the
  // result stays there for CollectCall. *ticket is printable text.
  Status Submit(std::string *ticket);

  // Where the last attempt ran, and the arrays it kept (ArgumentList::Keep):
  // for transaction blocks, whose later calls read them from there.
  const std::vector<wire::DataRef> &kept() const { return kept_; }
  // The address a kept array's reader connects to: numeric, as the server's
  // executables resolve no names ("ip:port", or "unix:/path").
  const std::string &kept_address() const { return kept_address_; }

  // Aborts a running Execute from another thread: the connection is shut
  // down, ninfd sees the hang-up and kills the executable.
  void Cancel();

  // Where the time of the last Execute went (Ninf_get_call_info).
  const Ninf_call_info &info() const { return info_; }

  // For transaction blocks (transaction.h), which record prepared calls and
  // run them later: the arguments (whose arrays the block re-points), the
  // function and where it goes, and the block plan's server.
  ArgumentList &arguments() { return arguments_; }
  const std::string &function() const { return function_; }
  const std::optional<ServerAddress> &metaserver() const { return meta_; }
  const ServerAddress &server() const { return server_; }
  // Closes the connection Prepare opened; Execute opens a new one. A block
  // of many recorded calls holds no connection until it runs.
  void Detach();
  // Placed calls: ask the metaserver to keep this server first unless
  // another completes earlier by more than `margin` of its time.
  void Prefer(const std::string &server_id, double margin) {
    prefer_server_id_ = server_id;
    prefer_margin_ = margin;
  }

 private:
  // Resolves the name and fetches the interface: from the metaserver for a
  // bare name when one is configured (the server is chosen in Execute),
  // else from the named or default server, whose connection stays open.
  Status Open(const char *name, InterfacePtr *iface);
  // Opens the first of the fallback servers that serves the function.
  Status OpenFallback(InterfacePtr *iface);
  // Connects to `server` and gets the function's interface; the connection
  // is kept for the call unless a same-host path just became known.
  Status OpenServer(const ServerAddress &server, InterfacePtr *iface);
  // The call on servers the metaserver ranks, the next one after a failure
  // before any result byte, each attempt reported.
  Status ExecutePlaced();
  // One attempt on `server`; the connection is kept where Cancel finds it.
  Status Attempt(const ServerAddress &server, ExchangeTimes *times);
  // CALL and ARGS on `ch`, then the result or (Submit) the ticket.
  Status Exchange(const ServerAddress &server, Channel &ch, ExchangeTimes *times);
  // Fills info_ for an attempt on `server` that began at `start`.
  void NoteAttempt(const ServerAddress &server, const ExchangeTimes &times, const Status &st,
                   double start);

  std::optional<ServerAddress> meta_;  // placed by this metaserver
  ServerAddress server_;
  std::string function_;
  std::unique_ptr<Channel> channel_;
  ArgumentList arguments_;
  std::mutex channel_mutex_;  // Cancel against the end of Execute; guards cancelled_
  bool cancelled_ = false;
  Ninf_call_info info_{};
  std::string prefer_server_id_;
  double prefer_margin_ = 0;
  bool submit_ = false;  // Submit: the attempt asks for a ticket
  std::string ticket_;   // its text
  std::vector<wire::DataRef> kept_;
  std::string kept_address_;
};

// Collects a two-phase call's result: the same function and argument list
// as at submission; OUT arrays are filled, then the result is released on
// the server. Waits while the call still runs. Errors: NINF_ERR_INVALID_ID
// (unknown ticket, or collected already), NINF_ERR_EXPIRED, NINF_ERR_AUTH
// (another key than the submitter's), NINF_ERR_INVALID_ARGUMENT (a ticket
// that does not parse, or of another function), the call's own error.
Status CollectCall(const char *ticket, const char *name, va_list *ap);
Status CollectCallBinding(const char *ticket, const char *name, const ninf_binding_args *binding);

// A client-chosen id for the server's log.
uint64_t NextCallId();

// The CALL frame that starts `function` on its server, with a fresh call id,
// the client's heartbeat setting and the call's CalcOrder (0: unknown).
wire::CallRequest MakeCallRequest(const std::string &function, bool persistent,
                                  double work_flops = 0);

}  // namespace ninf::client
