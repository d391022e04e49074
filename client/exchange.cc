#include "client/exchange.h"

#include <chrono>
#include <cstring>

#include "client/connect.h"
#include "client/options.h"
#include "client/segments.h"
#include "protocol/shared_memory.h"

namespace ninf::client {

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
  // Over TLS the arguments wait for the hand-over (they go to the executable
  // through a session of its own).
  if (st.ok() && preamble && !list.iface().redirect() && ch.tls())
    NINF_RETURN_IF_ERROR(TakeHandover(ch));
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
  if (st.ok() && ch.tls()) NINF_RETURN_IF_ERROR(TakeHandover(ch));
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
