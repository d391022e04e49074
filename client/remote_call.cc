#include "remote_call.h"

#include <sys/socket.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>

namespace ninf::client {
namespace {

constexpr int kConnectTimeoutMs = 10000;

// Interfaces by "host:port/name". A function's interface does not change
// while its server runs, so the first fetch serves every later call.
std::mutex g_cache_mutex;
std::map<std::string, std::shared_ptr<const wire::FunctionInterface>> g_cache;

std::shared_ptr<const wire::FunctionInterface> CacheGet(const std::string &key) {
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  auto it = g_cache.find(key);
  return it == g_cache.end() ? nullptr : it->second;
}

void CachePut(const std::string &key, std::shared_ptr<const wire::FunctionInterface> iface) {
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  g_cache[key] = std::move(iface);
}

uint64_t NextCallId() {
  // Random high bits tell apart the calls of different client processes in
  // the server's log.
  static std::atomic<uint64_t> next{(std::random_device{}() & 0xffffull) << 32};
  return ++next;
}

// Per-call I/O timeout from NINF_TIMEOUT (seconds); none by default, since a
// remote computation may legitimately take hours.
int IoTimeoutMs() {
  const char *env = std::getenv("NINF_TIMEOUT");
  if (!env || !*env) return -1;
  double s = std::atof(env);
  return s > 0 ? static_cast<int>(s * 1000) : -1;
}

int KindOf(const wire::Param &p) {
  if (IsArray(p)) return NINF_ARGKIND_POINTER;
  switch (p.type()) {
    case wire::TYPE_LONG: return NINF_ARGKIND_LONG;
    case wire::TYPE_FLOAT:
    case wire::TYPE_DOUBLE: return NINF_ARGKIND_DOUBLE;
    case wire::TYPE_SCOMPLEX: return NINF_ARGKIND_SCOMPLEX;
    case wire::TYPE_DCOMPLEX: return NINF_ARGKIND_DCOMPLEX;
    case wire::TYPE_STRING: return NINF_ARGKIND_STRING;
    default: return NINF_ARGKIND_INT;
  }
}

// Encodes one IN scalar (the client half of the runtime's DecodeScalar).
Status EncodeScalar(const wire::Param &p, const ninf_argvalue &v, wire::Value *out, int64_t *int_value) {
  switch (KindOf(p)) {
    case NINF_ARGKIND_INT:
    case NINF_ARGKIND_LONG:
      out->set_i(v.i);
      *int_value = v.i;
      return Status::Ok();
    case NINF_ARGKIND_DOUBLE:
      out->set_d(v.d);
      return Status::Ok();
    case NINF_ARGKIND_SCOMPLEX:
    case NINF_ARGKIND_DCOMPLEX:
      out->mutable_c()->set_re(v.re);
      out->mutable_c()->set_im(v.im);
      return Status::Ok();
    case NINF_ARGKIND_STRING:
      if (!v.s) return Status(NINF_ERR_INVALID_ARGUMENT, "string argument '" + p.name() + "' is NULL");
      out->set_s(v.s);
      return Status::Ok();
    default:
      return Status(NINF_ERR_INTERNAL, "scalar '" + p.name() + "' has no encoding");
  }
}

}  // namespace

void ClearInterfaceCache() {
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  g_cache.clear();
}

Status RemoteCall::Connect() {
  int fd = -1;
  NINF_RETURN_IF_ERROR(ConnectTcp(server_.host, server_.port, kConnectTimeoutMs, &fd));
  channel_ = std::make_unique<Channel>(fd, IoTimeoutMs());
  return Status::Ok();
}

Status RemoteCall::FetchInterface() {
  const std::string key = server_.Key() + "/" + function_;
  iface_ = CacheGet(key);
  if (iface_) return Status::Ok();
  wire::QueryInterface q;
  q.set_name(function_);
  NINF_RETURN_IF_ERROR(channel_->SendFrame(FRAME_QUERY_INTERFACE, &q));
  wire::InterfaceReply reply;
  FrameHeader h;
  NINF_RETURN_IF_ERROR(channel_->RecvReply(FRAME_INTERFACE, 0, &reply, &h));
  Status st = ValidateInterface(reply.iface());
  if (!st.ok()) return Status(st.code(), "server sent a bad interface for '" + function_ + "': " + st.message());
  if (reply.iface().name() != function_)
    return Status(NINF_ERR_PROTOCOL, "asked for '" + function_ + "', server described '" + reply.iface().name() + "'");
  auto iface = std::make_shared<wire::FunctionInterface>(std::move(*reply.mutable_iface()));
  iface_ = iface;
  CachePut(key, iface);
  return Status::Ok();
}

Status RemoteCall::BuildArguments(va_list *ap) {
  const int n = iface_->params_size();
  std::vector<int> kinds(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) kinds[i] = KindOf(iface_->params(i));
  values_.resize(static_cast<std::size_t>(n));
  ninf__collect_args(kinds.data(), n, ap, values_.data());

  std::vector<int64_t> ints(static_cast<std::size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    const wire::Param &p = iface_->params(i);
    if (IsInScalar(p)) {
      NINF_RETURN_IF_ERROR(EncodeScalar(p, values_[i], args_.add_scalars(), &ints[i]));
    }
  }
  NINF_RETURN_IF_ERROR(ComputeLayout(*iface_, ints, 0, &layout_));
  for (int i = 0; i < n; ++i) {
    const wire::Param &p = iface_->params(i);
    if (IsArray(p) && p.mode() != wire::MODE_WORK && layout_.params[i].bytes > 0 && !values_[i].p)
      return Status(NINF_ERR_INVALID_ARGUMENT, "argument '" + p.name() + "' of " + function_ + " is a NULL pointer");
  }
  return Status::Ok();
}

Status RemoteCall::Prepare(const char *name, va_list *ap) {
  NINF_RETURN_IF_ERROR(ResolveName(name, &server_, &function_));
  NINF_RETURN_IF_ERROR(Connect());
  NINF_RETURN_IF_ERROR(FetchInterface());
  return BuildArguments(ap);
}

Status RemoteCall::Execute() {
  call_id_ = NextCallId();
  wire::CallRequest req;
  req.set_name(function_);
  req.set_call_id(call_id_);
  std::vector<iovec> out_arrays, in_arrays;
  for (int i = 0; i < iface_->params_size(); ++i) {
    const wire::Param &p = iface_->params(i);
    iovec v{values_[i].p, layout_.params[i].bytes};
    if (SendsArray(p)) out_arrays.push_back(v);
    if (ReturnsArray(p)) in_arrays.push_back(v);
  }
  // CALL and ARGS go back to back: ninfd reads only the CALL frame and hands
  // the connection, ARGS included, to the executable.
  Status st = channel_->SendFrame(FRAME_CALL, &req);
  if (st.ok()) st = channel_->SendFrame(FRAME_ARGS, &args_, out_arrays);
  if (!st.ok()) {
    // The peer may have refused the call and closed: its reason, if it sent
    // one, is more useful than "connection reset".
    channel_->set_timeout_ms(1000);
    wire::Result ignored;
    FrameHeader h;
    Status reason = channel_->RecvReply(FRAME_RESULT, 0, &ignored, &h);
    return reason.ok() || reason.code() == NINF_ERR_COMMUNICATION || reason.code() == NINF_ERR_TIMEOUT ? st : reason;
  }
  wire::Result result;
  FrameHeader h;
  NINF_RETURN_IF_ERROR(channel_->RecvReply(FRAME_RESULT, layout_.return_bytes, &result, &h));
  if (h.payload_length != layout_.return_bytes)
    return Status(NINF_ERR_PROTOCOL, "server returned " + std::to_string(h.payload_length) +
                                         " bytes of results, expected " + std::to_string(layout_.return_bytes));
  NINF_RETURN_IF_ERROR(channel_->RecvPayload(in_arrays));
  channel_.reset();
  return Status::Ok();
}

}  // namespace ninf::client
