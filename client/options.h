// Client-wide settings: timeouts, heartbeats, the key and the transport.
// Defaults come from the environment (NINF_CONNECT_TIMEOUT, NINF_TIMEOUT,
// NINF_HEARTBEAT, all in seconds, NINF_TIMEOUT=0 waits forever;
// NINF_KEY_FILE; NINF_TRANSPORT; NINF_TLS_CA, NINF_TLS_CERT,
// NINF_TLS_KEY); grpc_initialize() may replace them from
// its config file.
#pragma once

#include <cstdint>
#include <string>

#include "protocol/status.h"

namespace ninf::client {

struct ClientOptions {
  int connect_timeout_ms = 10000;
  // A call fails with NINF_ERR_TIMEOUT when its peer makes no progress for
  // this long (-1: wait forever). Liveness is on by default: servers send
  // heartbeats while a call waits or computes, so a long computation is
  // never mistaken for a dead server, while a dead server or a stalled
  // network fails the call within this bound.
  int session_timeout_ms = 60000;
  int heartbeat_ms = 0;  // 0: automatic (HeartbeatMs)
  // A key file (protocol/auth.h, docs/security.md): with one, every
  // connection first proves that it holds the file's first key, and the
  // server must prove it too. Read again for every connection, so that a
  // rotated key takes effect without restarting the program.
  std::string key_file;
  // Whether key_file is NINF_KEY_FILE's: then the variable is read again
  // for every connection too, so that a program (a Python session) that
  // sets it after its first call is heard. False once a config file
  // (grpc_initialize) names its own key_file.
  bool key_file_from_env = true;
  // TLS (docs/client.md): with trust anchors (a PEM file of CA
  // certificates), every TCP connection to ninfd speaks TLS 1.3 and
  // verifies the server's certificate for the host name or IP dialled; the
  // same-host Unix socket stays plaintext. tls_cert and tls_key: the
  // client's certificate, for servers that require one (mutual TLS).
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  // NINF_TLS_RESUME: whether a connection to ninfd resumes the TLS session
  // of the last one (a session ticket, kept per server) instead of a full
  // handshake with certificate checks. Off, every call pays the full
  // handshake: for measuring it, or for operators who want every
  // connection to see the server's certificate afresh.
  bool tls_resume = true;
  // How arrays travel to a server on this host (NINF_TRANSPORT):
  //   kAuto    its Unix-domain socket when it offers one, and shared memory
  //            for calls whose arrays reach shared_memory_min_bytes;
  //   kSocket  its Unix-domain socket, arrays through the socket;
  //   kTcp     TCP only (an explicit unix: server still uses its socket).
  enum class Transport { kAuto, kSocket, kTcp };
  Transport transport = Transport::kAuto;
  // Below this, the socket beats passing and mapping a segment.
  uint64_t shared_memory_min_bytes = 64 * 1024;
  // Transaction blocks keep intermediates on the servers and forward them
  // server to server (NINF_FORWARD=0: every array comes back through the
  // client, as a baseline for benchmarks and a way around a network where
  // servers cannot reach each other).
  bool forward = true;
};

// The heartbeat period a call asks for: the configured one, else a third of
// the session timeout (at most 10 s), so that two beats may be lost before
// the timeout fires.
int HeartbeatMs(const ClientOptions &o);

// The options in force (the defaults where the environment is invalid).
ClientOptions Options();

// The same, with NINF_ERR_CONFIG naming the variable when the environment
// holds a bad value: every call checks this before it connects.
Status CheckedOptions(ClientOptions *out);
void SetOptions(const ClientOptions &options);

}  // namespace ninf::client
