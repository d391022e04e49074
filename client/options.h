// Client-wide settings: timeouts and heartbeats. Defaults come from the
// environment (NINF_CONNECT_TIMEOUT, NINF_TIMEOUT, NINF_HEARTBEAT, all in
// seconds); grpc_initialize() may replace them from its config file.
#pragma once

#include "status.h"

namespace ninf::client {

struct ClientOptions {
  int connect_timeout_ms = 10000;
  // A call fails with NINF_ERR_TIMEOUT when its peer makes no progress for
  // this long (-1: wait forever, since a computation may take hours). With
  // heartbeats on, the executable proves it is alive while it computes, so
  // a dead server or a stalled network shows up within the timeout.
  int session_timeout_ms = -1;
  int heartbeat_ms = 0;  // 0: no heartbeats
};

// The options in force (the defaults where the environment is invalid).
ClientOptions Options();

// The same, with NINF_ERR_CONFIG naming the variable when the environment
// holds a bad value: every call checks this before it connects.
Status CheckedOptions(ClientOptions *out);
void SetOptions(const ClientOptions &options);

}  // namespace ninf::client
