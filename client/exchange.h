// The wire exchange of one call on an open connection: CALL and ARGS out
// (the arrays straight from the caller's memory, or through a shared
// segment on a same-host connection), then the RESULT straight into the
// caller's OUT arrays; or, for a two-phase call, the ticket, and later the
// RESULT it collects. What one-shot calls (remote_call.h), function handles
// (handle.h) and two-phase collection (two_phase.h) share.
//
// Builds on arguments.h (the ARGS message and the arrays' iovecs),
// connect.h (following a redirect to the executable), segments.h (the
// client's shared segments) and protocol/ (wire.h frames, shared_memory.h
// placement).
#pragma once

#include <cstdint>
#include <vector>

#include "client/arguments.h"
#include "ninf.pb.h"
#include "protocol/status.h"
#include "protocol/wire.h"

namespace ninf::client {

// Seconds on the monotonic clock: what the times below, and a placed
// call's total, are measured with.
double MonotonicSeconds();

struct ExchangeTimes {
  uint64_t in_bytes = 0;
  double in_seconds = 0;
  uint64_t out_bytes = 0;
  double out_seconds = 0;
  bool result_started = false;
  wire::ServerTimes server;         // from the RESULT frame
  std::vector<wire::DataRef> kept;  // the RESULT's kept arrays (ArgumentList::Keep)
};

// Sends ARGS (after `preamble`, e.g. the CALL frame, if not null) and
// receives the RESULT into the caller's arrays; heartbeat frames that arrive
// meanwhile are skipped by Channel::RecvReply. On a Unix-domain connection
// large arrays go through a shared segment instead of the socket
// (shared_memory.h, ClientOptions::transport).
//
// `times` (may be null) gets what the metaserver learns from the call: the
// bytes and time of the send and of the receive (from the first result byte
// to the last), and whether any result byte reached the caller's arrays: if
// not, the call may be retried elsewhere without the caller noticing.
Status ExchangeArguments(Channel &ch, const ArgumentList &list, const wire::CallRequest *preamble,
                         ExchangeTimes *times = nullptr);

// A two-phase call's first half: CALL (with submit set) and ARGS, then the
// ticket the executable answers once the arguments are in.
Status SubmitArguments(Channel &ch, const ArgumentList &list, const wire::CallRequest &call,
                       wire::Submitted *ticket);

// Receives a RESULT frame (after the request that asks for it) into the
// caller's OUT arrays: the second half of ExchangeArguments, and how a
// two-phase call's result is collected. Sets times->server and, once a
// result byte is written, times->result_started.
Status ReceiveResult(Channel &ch, const ArgumentList &list, ExchangeTimes *times);

}  // namespace ninf::client
