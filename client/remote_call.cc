#include "client/remote_call.h"

#include <sys/socket.h>

#include <atomic>
#include <cstdio>
#include <random>

#include "client/cancel_token.h"
#include "client/connect.h"
#include "client/interfaces.h"
#include "client/metaserver.h"
#include "client/options.h"
#include "client/two_phase.h"

namespace ninf::client {
namespace {

// Placement rounds of one call: each names up to 1 + retries servers; a
// round whose servers all failed asks for others, excluding them.
constexpr int kPlacementRounds = 3;

}  // namespace

uint64_t NextCallId() {
  // Random high bits tell apart the calls of different client processes in
  // the server's log.
  static std::atomic<uint64_t> next{(std::random_device{}() & 0xffffull) << 32};
  return ++next;
}

wire::CallRequest MakeCallRequest(const std::string &function, bool persistent, double work_flops) {
  wire::CallRequest req;
  req.set_work_flops(work_flops);
  req.set_name(function);
  req.set_call_id(NextCallId());
  req.set_persistent(persistent);
  req.set_heartbeat_ms(static_cast<uint32_t>(HeartbeatMs(Options())));
  return req;
}

Status RemoteCall::Open(const char *name, InterfacePtr *iface) {
  NINF_RETURN_IF_ERROR(ResolveName(name, &server_, &function_));
  ServerAddress meta;
  Status config;
  const bool placed = IsBareName(name) && ConfiguredMetaserver(&meta, &config);
  NINF_RETURN_IF_ERROR(config);
  if (!placed) return OpenServer(server_, iface);
  Status st = MetaInterface(meta, function_, iface);
  if (st.ok()) {
    meta_ = meta;
    return st;
  }
  if (!MetaserverUnreachable(st)) return st;  // an answer: function unknown, ...
  return OpenFallback(iface);
}

Status RemoteCall::OpenServer(const ServerAddress &server, InterfacePtr *iface) {
  NINF_RETURN_IF_ERROR(ConnectToServer(server, &channel_));
  NINF_RETURN_IF_ERROR(GetInterface(server, function_, *channel_, iface));
  // The interface reply of a server on this host names its same-host path:
  // the process's first call takes it too (Execute reconnects), not the
  // loopback TCP connection that asked, where big arguments cross in
  // socket-buffer pieces.
  if (!channel_->local() && TakesSameHostPath(server)) Detach();
  return Status::Ok();
}

Status RemoteCall::OpenFallback(InterfacePtr *iface) {
  Status last(NINF_ERR_CONNECT, "no server to fall back to");
  for (const ServerAddress &server : FallbackServers()) {
    last = OpenServer(server, iface);
    if (last.ok()) {
      server_ = server;
      return last;
    }
    channel_.reset();
    // Interrupted (Ninf_binding_set_interrupt): the caller wants out, not
    // the next server.
    if (last.code() == NINF_ERR_CANCELLED) return last;
  }
  return Status(last.code(), "the metaserver is unreachable and no fallback server serves '" +
                                 function_ + "': " + last.message());
}

Status RemoteCall::Prepare(const char *name, va_list *ap) {
  InterfacePtr iface;
  NINF_RETURN_IF_ERROR(Open(name, &iface));
  return arguments_.Build(iface, CollectVarargs(*iface, ap));
}

Status RemoteCall::PrepareBinding(const char *name, const ninf_binding_args *binding) {
  InterfacePtr iface;
  NINF_RETURN_IF_ERROR(Open(name, &iface));
  return BuildFromBinding(iface, binding, &arguments_);
}

Status RemoteCall::Estimate(const char *name, va_list *ap, Ninf_call_info *out) {
  NINF_RETURN_IF_ERROR(ResolveName(name, &server_, &function_));
  // A named or default server's interface is cached after the first call:
  // estimating a call then costs no round trip, which is what lets
  // libninf_offload ask before every LAPACK call. A placed call asks the
  // metaserver, as Prepare does.
  ServerAddress meta;
  Status config;
  const bool placed = IsBareName(name) && ConfiguredMetaserver(&meta, &config);
  NINF_RETURN_IF_ERROR(config);
  InterfacePtr iface = placed ? nullptr : CachedInterface(server_, function_);
  if (!iface) {
    NINF_RETURN_IF_ERROR(Open(name, &iface));
    Detach();
  }
  NINF_RETURN_IF_ERROR(arguments_.Build(iface, CollectVarargs(*iface, ap)));
  *out = Ninf_call_info{};
  std::snprintf(out->server, sizeof out->server, "%s", meta_ ? "" : server_.Key().c_str());
  out->work_flops = arguments_.work_flops();
  out->send_bytes = arguments_.send_bytes();
  out->recv_bytes = arguments_.return_bytes();
  return Status::Ok();
}

void RemoteCall::Detach() {
  std::lock_guard<std::mutex> lock(channel_mutex_);
  channel_.reset();
}

Status RemoteCall::Execute() {
  if (meta_) return ExecutePlaced();
  if (!channel_) {
    std::unique_ptr<Channel> ch;
    NINF_RETURN_IF_ERROR(ConnectToServer(server_, &ch));
    std::lock_guard<std::mutex> lock(channel_mutex_);
    if (cancelled_) return Status(NINF_ERR_CANCELLED, "call cancelled");
    channel_ = std::move(ch);
  }
  // CALL and ARGS go back to back: ninfd reads only the CALL frame and hands
  // the connection, ARGS included, to the executable.
  ExchangeTimes times;
  const double start = MonotonicSeconds();
  Status st = Exchange(server_, *channel_, &times);
  NoteAttempt(server_, times, st, start);
  std::lock_guard<std::mutex> lock(channel_mutex_);
  if (st.ok()) CloseWithoutTimeWait(*channel_);
  channel_.reset();
  return st;
}

void RemoteCall::NoteAttempt(const ServerAddress &server, const ExchangeTimes &times,
                             const Status &st, double start) {
  Ninf_call_info &i = info_;
  i = Ninf_call_info{};
  std::snprintf(i.server, sizeof i.server, "%s", server.Key().c_str());
  i.error = st.code();
  i.threads = static_cast<int>(times.server.threads());
  i.total_seconds = MonotonicSeconds() - start;
  i.queue_seconds = times.server.queue_seconds();
  i.send_seconds = times.in_seconds;
  i.server_recv_seconds = times.server.recv_seconds();
  i.compute_seconds = times.server.compute_seconds();
  i.recv_seconds = times.out_seconds;
  i.work_flops = arguments_.work_flops();
  i.send_bytes = times.in_bytes;
  i.recv_bytes = times.out_bytes;
}

Status RemoteCall::Exchange(const ServerAddress &server, Channel &ch, ExchangeTimes *times) {
  wire::CallRequest req = MakeCallRequest(function_, false, arguments_.work_flops());
  kept_.clear();
  kept_address_.clear();
  if (!submit_) {
    Status st = ExchangeArguments(ch, arguments_, &req, times);
    if (st.ok() && !times->kept.empty()) {
      kept_ = times->kept;
      kept_address_ = NumericAddress(server, ch.fd());
      for (wire::DataRef &ref : kept_) ref.set_address(kept_address_);
    }
    return st;
  }
  req.set_submit(true);
  req.set_keep_bytes(arguments_.return_bytes() + kResultFrameRoom);
  wire::Submitted ticket;
  const double start = MonotonicSeconds();
  Status st = SubmitArguments(ch, arguments_, req, &ticket);
  times->in_bytes = arguments_.send_bytes();
  times->in_seconds = MonotonicSeconds() - start;
  if (st.ok()) ticket_ = FormatTicket(server, function_, ticket);
  return st;
}

Status RemoteCall::Submit(std::string *ticket) {
  submit_ = true;
  ticket_.clear();
  Status st = Execute();
  submit_ = false;
  if (st.ok()) *ticket = ticket_;
  return st;
}

Status RemoteCall::Attempt(const ServerAddress &server, ExchangeTimes *times) {
  std::unique_ptr<Channel> ch;
  NINF_RETURN_IF_ERROR(ConnectToServer(server, &ch));
  {
    std::lock_guard<std::mutex> lock(channel_mutex_);
    if (cancelled_) return Status(NINF_ERR_CANCELLED, "call cancelled");
    channel_ = std::move(ch);
  }
  Status st = Exchange(server, *channel_, times);
  std::lock_guard<std::mutex> lock(channel_mutex_);
  if (st.ok()) CloseWithoutTimeWait(*channel_);
  channel_.reset();
  if (cancelled_ && !st.ok()) return Status(NINF_ERR_CANCELLED, "call cancelled");
  return st;
}

Status RemoteCall::ExecutePlaced() {
  wire::PlaceRequest request;
  request.set_function(function_);
  request.set_work_flops(arguments_.work_flops());
  request.set_in_bytes(arguments_.layout().send_bytes);
  request.set_out_bytes(arguments_.layout().return_bytes);
  request.set_limit(3);
  request.set_prefer_server_id(prefer_server_id_);
  request.set_prefer_margin(prefer_margin_);
  Status last(NINF_ERR_SERVER, "no server was tried");
  for (int round = 0; round < kPlacementRounds; ++round) {
    wire::Placement placement;
    Status st = MetaPlace(*meta_, request, &placement);
    if (!st.ok()) {
      // Nothing tried yet and the metaserver gone: the configured servers.
      if (round == 0 && MetaserverUnreachable(st)) {
        InterfacePtr iface;
        NINF_RETURN_IF_ERROR(OpenFallback(&iface));
        meta_.reset();
        return Execute();
      }
      return round == 0 ? st : last;
    }
    for (const wire::PlacementTarget &target : placement.targets()) {
      ServerAddress server;
      if (!ParseServerAddress(target.address(), &server).ok()) continue;
      ExchangeTimes times;
      const double start = MonotonicSeconds();
      st = Attempt(server, &times);
      NoteAttempt(server, times, st, start);
      wire::CallOutcome outcome;
      outcome.set_ticket(placement.ticket());
      outcome.set_server_id(target.server_id());
      outcome.set_site(placement.site());
      outcome.set_error_code(st.code());
      outcome.set_in_bytes(times.in_bytes);
      outcome.set_in_seconds(times.in_seconds);
      outcome.set_out_bytes(times.out_bytes);
      outcome.set_out_seconds(times.out_seconds);
      outcome.set_total_seconds(MonotonicSeconds() - start);
      MetaReportOutcome(*meta_, outcome);
      // Once a result byte has reached the caller's arrays, or the error
      // would recur anywhere, the call ends here.
      if (st.ok() || times.result_started || !RetryElsewhere(st)) return st;
      request.add_exclude(target.server_id());
      last = Status(st.code(), target.address() + ": " + st.message());
    }
  }
  return last;
}

void RemoteCall::Cancel() {
  std::lock_guard<std::mutex> lock(channel_mutex_);
  cancelled_ = true;
  if (channel_) AbortConnection(channel_->fd());
}

}  // namespace ninf::client
