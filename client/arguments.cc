#include "client/arguments.h"

#include <chrono>
#include <cstring>

#include "client/options.h"
#include "client/segments.h"
#include "protocol/shared_memory.h"

namespace ninf::client {
ninf_argkind ArgKindOf(const wire::Param &p) {
  if (IsArray(p)) return NINF_ARGKIND_POINTER;
  const ninf_type_info *info = ninf_type_info_of(p.type());
  return info ? info->vararg : NINF_ARGKIND_POINTER;  // ValidateInterface refused unknown types
}

std::vector<ninf_argvalue> CollectVarargs(const wire::FunctionInterface &iface, va_list *ap) {
  const int n = iface.params_size();
  std::vector<ninf_argkind> kinds(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) kinds[i] = ArgKindOf(iface.params(i));
  std::vector<ninf_argvalue> values(static_cast<std::size_t>(n));
  ninf__collect_args(kinds.data(), n, ap, values.data());
  return values;
}

namespace {

// " The call is dgeev(IN char jobvl, ...)": what the caller should compare
// its argument list with.
std::string CallIs(const wire::FunctionInterface &iface) {
  return " The call is " + Signature(iface) + ".";
}

std::string ArgumentAt(const wire::FunctionInterface &iface, int i) {
  return "argument " + std::to_string(i + 1) + " of " + iface.name() + " ('" +
         iface.params(i).name() + "')";
}

// An integer IN scalar that its C type cannot hold is what C varargs make
// of a mistake: a string "N" where a char 'N' goes arrives as a pointer's
// low bits. chars and shorts are accepted signed or unsigned, as C code
// passes either.
Status CheckIntegerFits(const wire::FunctionInterface &iface, int i, long long value) {
  const ninf_type_info *info = ninf_type_info_of(iface.params(i).type());
  if (!info || info->cls != NINF_CLASS_INTEGER || info->element_size >= 8) return Status::Ok();
  const int bits = 8 * static_cast<int>(info->element_size);
  const long long lo = -(1LL << (bits - 1)), hi = (1LL << bits) - 1;
  if (value >= lo && value <= hi) return Status::Ok();
  const std::string cause = info->element_size == 1
                                ? "was a string (\"N\") passed where a character ('N') goes?"
                                : "was an argument of another type passed here, or one left out "
                                  "before it?";
  return Status(NINF_ERR_ARGUMENT_MISMATCH, ArgumentAt(iface, i) + " = " + std::to_string(value) +
                                                " does not fit a " + info->name + ": " + cause +
                                                CallIs(iface));
}

// A negative extent is almost always an argument left out before the array
// (C varargs then read the next one in its place) or one of the wrong type.
Status CheckExtents(const wire::FunctionInterface &iface, std::span<const int64_t> ints) {
  for (int i = 0; i < iface.params_size(); ++i) {
    for (const wire::Expr &d : iface.params(i).dims()) {
      int64_t extent = 0;
      if (!EvalExpr(iface, d, ints, &extent).ok() || extent >= 0) continue;
      return Status(NINF_ERR_ARGUMENT_MISMATCH,
                    ArgumentAt(iface, i) + " would have " + std::to_string(extent) +
                        " elements in a dimension: is an argument left out, or of the wrong "
                        "type, before it?" +
                        CallIs(iface));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ArgumentList::Build(InterfacePtr iface, std::vector<ninf_argvalue> values) {
  iface_ = std::move(iface);
  values_ = std::move(values);
  const int n = iface_->params_size();
  if (values_.size() != static_cast<std::size_t>(n))
    return Status(NINF_ERR_ARGUMENT_MISMATCH, iface_->name() + " takes " + std::to_string(n) +
                                                  " arguments, got " +
                                                  std::to_string(values_.size()));
  args_.Clear();
  std::vector<int64_t> ints(static_cast<std::size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    const wire::Param &p = iface_->params(i);
    if (!IsInScalar(p)) continue;
    NINF_RETURN_IF_ERROR(CheckIntegerFits(*iface_, i, values_[i].i));
    NINF_RETURN_IF_ERROR(EncodeScalar(p, values_[i], args_.add_scalars(), &ints[i]));
  }
  // The dimensions are evaluated once per call; only a refused layout is
  // looked at again, to name the argument and the likely mistake.
  if (Status st = ComputeLayout(*iface_, ints, 0, &layout_); !st.ok()) {
    if (st.code() == NINF_ERR_ARGUMENT_MISMATCH) NINF_RETURN_IF_ERROR(CheckExtents(*iface_, ints));
    return st;
  }
  work_flops_ = 0;
  if (int64_t order = 0; iface_->calc_order().nodes_size() > 0 &&
                         EvalExpr(*iface_, iface_->calc_order(), ints, &order).ok())
    work_flops_ = static_cast<double>(order);
  for (int i = 0; i < n; ++i) {
    const wire::Param &p = iface_->params(i);
    if (IsArray(p) && p.mode() != wire::MODE_WORK && layout_.params[i].bytes > 0 && !values_[i].p)
      return Status(NINF_ERR_INVALID_ARGUMENT,
                    "argument '" + p.name() + "' of " + iface_->name() + " is a NULL pointer");
  }
  return Status::Ok();
}

void ArgumentList::OwnStrings() {
  for (ninf_argvalue &v : values_) {
    if (!v.s) continue;
    strings_.push_back(std::make_unique<std::string>(v.s));
    v.s = strings_.back()->c_str();
  }
}

std::vector<iovec> ArgumentList::Arrays(bool sending) const {
  std::vector<iovec> out;
  for (int i = 0; i < iface_->params_size(); ++i) {
    const wire::Param &p = iface_->params(i);
    if (sending ? SendsArray(p) && !read_kept(i) : ReturnsArray(p) && !kept(i))
      out.push_back({values_[i].p, layout_.params[i].bytes});
  }
  return out;
}

void ArgumentList::ReadKept(const wire::DataRef &ref) { *args_.add_refs() = ref; }

void ArgumentList::Keep(int param) { args_.add_keep(static_cast<uint32_t>(param)); }

void ArgumentList::ClearKept() {
  args_.clear_refs();
  args_.clear_keep();
}

bool ArgumentList::kept(int param) const {
  for (uint32_t k : args_.keep())
    if (k == static_cast<uint32_t>(param)) return true;
  return false;
}

bool ArgumentList::read_kept(int param) const {
  for (const wire::DataRef &r : args_.refs())
    if (r.param() == static_cast<uint32_t>(param)) return true;
  return false;
}

uint64_t ArgumentList::send_bytes() const {
  uint64_t bytes = layout_.send_bytes;
  for (const wire::DataRef &r : args_.refs()) bytes -= layout_.params[r.param()].bytes;
  return bytes;
}

uint64_t ArgumentList::return_bytes() const {
  uint64_t bytes = layout_.return_bytes;
  for (uint32_t k : args_.keep()) bytes -= layout_.params[k].bytes;
  return bytes;
}

namespace {

// The same-host path: the IN and INOUT arrays are copied into a shared
// segment (the one copy), which travels with the ARGS frame; the results
// are copied back out of it.
bool UseSharedMemory(const Channel &ch, const ArgumentList &list,
                     const wire::CallRequest *preamble) {
  // Kept data and two-phase results go through ninfd's store, not a segment.
  // A redirected call's executable may be on another host.
  if (!ch.local() || list.uses_kept_data() || (preamble && preamble->submit()) ||
      list.iface().redirect())
    return false;
  const CallLayout &layout = list.layout();
  const ClientOptions o = Options();
  return o.transport == ClientOptions::Transport::kAuto &&
         layout.send_bytes + layout.return_bytes >= o.shared_memory_min_bytes;
}

void CopyArrays(const ArgumentList &list, const SharedPlacement &placement, char *segment,
                bool into_segment) {
  const wire::FunctionInterface &iface = list.iface();
  for (int i = 0; i < iface.params_size(); ++i) {
    const wire::Param &p = iface.params(i);
    const uint64_t bytes = list.layout().params[static_cast<std::size_t>(i)].bytes;
    if (bytes == 0 || !(into_segment ? SendsArray(p) : ReturnsArray(p))) continue;
    char *place = segment + placement.offsets[static_cast<std::size_t>(i)];
    if (into_segment)
      std::memcpy(place, list.pointer(i), bytes);
    else
      std::memcpy(list.pointer(i), place, bytes);
  }
}

// The answer to FRAME_CALL of a function whose executables run where a
// launcher puts them: ninfd names the executable, and `ch` becomes a
// connection to it (protocol/ninf.proto, Redirect).
Status FollowRedirect(Channel &ch) {
  wire::Redirect redirect;
  FrameHeader h;
  NINF_RETURN_IF_ERROR(ch.RecvReply(FRAME_REDIRECT, 0, &redirect, &h));
  if (redirect.port() == 0 || redirect.port() > 65535 || redirect.host().empty())
    return Status(NINF_ERR_PROTOCOL, "ninfd redirected the call to no address");
  const ClientOptions o = Options();
  int fd = -1;
  Status st =
      ConnectTcp(redirect.host(), static_cast<int>(redirect.port()), o.connect_timeout_ms, &fd);
  if (!st.ok())
    return Status(st.code(), "connecting to the executable at " + redirect.host() + ":" +
                                 std::to_string(redirect.port()) + ": " + st.message());
  NINF_RETURN_IF_ERROR(ch.Replace(fd));
  wire::Claim claim;
  claim.set_token(redirect.token());
  return ch.SendFrame(FRAME_CLAIM, &claim);
}

}  // namespace

double MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Status ExchangeArguments(Channel &ch, const ArgumentList &list, const wire::CallRequest *preamble,
                         ExchangeTimes *times) {
  ExchangeTimes ignored_times;
  if (!times) times = &ignored_times;
  *times = ExchangeTimes{};
  Status st;
  SegmentLease lease;
  SharedPlacement placement;
  const bool shared = UseSharedMemory(ch, list, preamble);
  if (shared) {
    placement = PlaceShared(list.iface(), list.layout());
    NINF_RETURN_IF_ERROR(SegmentLease::Acquire(placement.bytes, &lease));
    CopyArrays(list, placement, lease.segment().data(), true);
  }
  const double t_send = MonotonicSeconds();
  if (preamble) st = ch.SendFrame(FRAME_CALL, preamble);
  // Refused before a redirect (busy, shutting down): the error is the answer.
  if (st.ok() && preamble && list.iface().redirect()) NINF_RETURN_IF_ERROR(FollowRedirect(ch));
  if (st.ok() && shared) {
    wire::Args args = list.args();
    args.set_shared_memory(true);
    st = ch.SendFrame(FRAME_ARGS, &args, {}, lease.segment().fd());
  } else if (st.ok()) {
    st = ch.SendFrame(FRAME_ARGS, &list.args(), list.SendArrays());
  }
  if (!st.ok()) {
    // The peer may have refused the call and closed: its reason, if it sent
    // one, is more useful than "connection reset".
    ch.set_timeout_ms(1000);
    wire::Result ignored;
    FrameHeader h;
    Status reason = ch.RecvReply(FRAME_RESULT, 0, &ignored, &h);
    bool no_reason =
        reason.ok() || reason.code() == NINF_ERR_COMMUNICATION || reason.code() == NINF_ERR_TIMEOUT;
    return no_reason ? st : reason;
  }
  times->in_bytes = list.send_bytes();
  times->in_seconds = MonotonicSeconds() - t_send;
  if (!shared) return ReceiveResult(ch, list, times);
  wire::Result result;
  FrameHeader h;
  NINF_RETURN_IF_ERROR(ch.RecvReply(FRAME_RESULT, 0, &result, &h));
  const double t_result = MonotonicSeconds();
  times->server = result.server_times();
  if (!result.shared_memory())
    return Status(NINF_ERR_PROTOCOL, "server did not answer in shared memory");
  if (h.payload_length != 0)
    return Status(NINF_ERR_PROTOCOL, "server returned " + std::to_string(h.payload_length) +
                                         " bytes of results, expected none");
  // From here on the caller's arrays are written: a failure is final.
  times->result_started = true;
  CopyArrays(list, placement, lease.segment().data(), false);
  times->out_bytes = list.layout().return_bytes;  // out of the segment, not the socket
  times->out_seconds = MonotonicSeconds() - t_result;
  lease.Keep();
  return Status::Ok();
}

Status ReceiveResult(Channel &ch, const ArgumentList &list, ExchangeTimes *times) {
  const uint64_t expected = list.return_bytes();
  wire::Result result;
  FrameHeader h;
  NINF_RETURN_IF_ERROR(ch.RecvReply(FRAME_RESULT, expected, &result, &h));
  const double t_result = MonotonicSeconds();
  times->server = result.server_times();
  if (result.shared_memory())
    return Status(NINF_ERR_PROTOCOL, "server answered in shared memory, unasked");
  if (h.payload_length != expected)
    return Status(NINF_ERR_PROTOCOL, "server returned " + std::to_string(h.payload_length) +
                                         " bytes of results, expected " + std::to_string(expected));
  if (result.kept_size() != list.args().keep_size())
    return Status(NINF_ERR_PROTOCOL, "server kept " + std::to_string(result.kept_size()) +
                                         " arrays, asked to keep " +
                                         std::to_string(list.args().keep_size()));
  times->kept.assign(result.kept().begin(), result.kept().end());
  // From here on the caller's arrays are written: a failure is final.
  times->result_started = true;
  Status st = ch.RecvPayload(list.ReturnArrays());
  times->out_bytes = expected;
  times->out_seconds = MonotonicSeconds() - t_result;
  return st;
}

Status SubmitArguments(Channel &ch, const ArgumentList &list, const wire::CallRequest &call,
                       wire::Submitted *ticket) {
  Status st = ch.SendFrame(FRAME_CALL, &call);
  if (st.ok()) st = ch.SendFrame(FRAME_ARGS, &list.args(), list.SendArrays());
  FrameHeader h;
  // Refused before the arguments were read: the reason is more useful than
  // the reset that ended the send.
  if (!st.ok()) ch.set_timeout_ms(1000);
  Status answer = ch.RecvReply(FRAME_SUBMITTED, 0, ticket, &h);
  if (!st.ok() &&
      (answer.ok() || answer.code() == NINF_ERR_COMMUNICATION || answer.code() == NINF_ERR_TIMEOUT))
    return st;
  return answer;
}

}  // namespace ninf::client
