// One request and its reply over a blocking Channel, typed: the request's
// message type names its frame and its reply's, so a caller cannot send one
// frame and wait for another's answer. Rpc's specializations below are the
// only list of those pairs (requests whose message type is theirs alone:
// COLLECT and RELEASE share StoreKey and keep their explicit frames).
// Builds on protocol/wire.h.
#pragma once

#include "ninf.pb.h"
#include "protocol/frame.h"
#include "protocol/status.h"
#include "protocol/wire.h"

namespace ninf {

template <class Request>
struct Rpc;  // no primary template: only the pairs below

#define NINF_RPC_(RequestT, request_frame, ReplyT, reply_frame) \
  template <>                                                   \
  struct Rpc<RequestT> {                                        \
    using Reply = ReplyT;                                       \
    static constexpr FrameType kRequest = request_frame;        \
    static constexpr FrameType kReply = reply_frame;            \
  };
NINF_RPC_(wire::StatsRequest, FRAME_STATS, wire::StatsReply, FRAME_STATS_REPLY)
NINF_RPC_(wire::ListRequest, FRAME_LIST, wire::ListReply, FRAME_LIST_REPLY)
NINF_RPC_(wire::QueryInterface, FRAME_QUERY_INTERFACE, wire::InterfaceReply, FRAME_INTERFACE)
NINF_RPC_(wire::ServerRegistration, FRAME_META_REGISTER, wire::MetaAck, FRAME_META_ACK)
NINF_RPC_(wire::LoadReport, FRAME_META_LOAD, wire::MetaAck, FRAME_META_ACK)
NINF_RPC_(wire::PlaceRequest, FRAME_META_PLACE, wire::Placement, FRAME_META_PLACEMENT)
NINF_RPC_(wire::ProbeOutcome, FRAME_META_PROBED, wire::MetaAck, FRAME_META_ACK)
NINF_RPC_(wire::CallOutcome, FRAME_META_OUTCOME, wire::MetaAck, FRAME_META_ACK)
NINF_RPC_(wire::RelayRegister, FRAME_RELAY_REGISTER, wire::RelayAck, FRAME_RELAY_ACK)
#undef NINF_RPC_

// Sends `request` and reads its reply (no payload): errors are SendFrame's
// and RecvReply's (a FRAME_ERROR answer becomes its Status).
template <class Request>
Status Ask(Channel &ch, const Request &request, typename Rpc<Request>::Reply *reply) {
  NINF_RETURN_IF_ERROR(ch.SendFrame(Rpc<Request>::kRequest, &request));
  FrameHeader h;
  return ch.RecvReply(Rpc<Request>::kReply, 0, reply, &h);
}

}  // namespace ninf
