#include "arguments.h"

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
    if (IsInScalar(p))
      NINF_RETURN_IF_ERROR(EncodeScalar(p, values_[i], args_.add_scalars(), &ints[i]));
  }
  NINF_RETURN_IF_ERROR(ComputeLayout(*iface_, ints, 0, &layout_));
  for (int i = 0; i < n; ++i) {
    const wire::Param &p = iface_->params(i);
    if (IsArray(p) && p.mode() != wire::MODE_WORK && layout_.params[i].bytes > 0 && !values_[i].p)
      return Status(NINF_ERR_INVALID_ARGUMENT,
                    "argument '" + p.name() + "' of " + iface_->name() + " is a NULL pointer");
  }
  return Status::Ok();
}

std::vector<iovec> ArgumentList::Arrays(bool sending) const {
  std::vector<iovec> out;
  for (int i = 0; i < iface_->params_size(); ++i) {
    const wire::Param &p = iface_->params(i);
    if (sending ? SendsArray(p) : ReturnsArray(p))
      out.push_back({values_[i].p, layout_.params[i].bytes});
  }
  return out;
}

Status ExchangeArguments(Channel &ch, const ArgumentList &list, const wire::CallRequest *preamble) {
  Status st;
  if (preamble) st = ch.SendFrame(FRAME_CALL, preamble);
  if (st.ok()) st = ch.SendFrame(FRAME_ARGS, &list.args(), list.SendArrays());
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
  const uint64_t expected = list.layout().return_bytes;
  wire::Result result;
  FrameHeader h;
  NINF_RETURN_IF_ERROR(ch.RecvReply(FRAME_RESULT, expected, &result, &h));
  if (h.payload_length != expected)
    return Status(NINF_ERR_PROTOCOL, "server returned " + std::to_string(h.payload_length) +
                                         " bytes of results, expected " + std::to_string(expected));
  return ch.RecvPayload(list.ReturnArrays());
}

}  // namespace ninf::client
