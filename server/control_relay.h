// The control channel of an executable whose rank 0 may run on another host
// (protocol/launch.h, `launch_address`): ninfd's Process keeps its usual
// socketpair, and this relay joins the socketpair's other end to the TCP
// connection rank 0 claimed it over, inside a TLS session keyed by the
// launch token (protocol/tls.h PskServerSession: the loop carries its
// records).
//
//   Process ── socketpair (messages + fds) ── ControlRelay ── TLS/TCP ── rank 0
//
// Messages go through unchanged, back to back on the stream, except what
// TCP cannot carry: a CTL_HANDOFF never has the client's socket (the Job
// keeps the client). The relay gives it a fresh 128-bit redirect token,
// forwards it, and answers the Process CTL_REDIRECTED with the token and
// rank 0's address, for the Job to send the client FRAME_REDIRECT inside
// ninfd's own session. The client then connects to rank 0 itself, and
// arrays go client <-> rank 0 directly, as ever.
//
// Either side closing ends the relay: the Process sees its channel close,
// rank 0 sees the stream end (and exits, as a launched executable does).
// Runs on the daemon's loop; owned by the LaunchBroker.
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <string>

#include "daemon/unique_fd.h"
#include "protocol/control.h"
#include "protocol/tls.h"

namespace ninf::server {

class ControlRelay {
 public:
  // `local`: the socketpair end the executable would have had; `tcp`: the
  // claimed connection (taken over), whose TLS session `key` authenticates;
  // rank 0 listens for clients at host:port. `on_closed` runs once both
  // handles are closed, after which the relay deletes itself.
  static ControlRelay *Start(uv_loop_t *loop, daemon::UniqueFd local, int tcp, const tls::Psk &key,
                             std::string host, int port,
                             std::function<void(ControlRelay *)> on_closed);

  ControlRelay(const ControlRelay &) = delete;
  ControlRelay &operator=(const ControlRelay &) = delete;

  // Closes both sides.
  void Close();
  // No on_closed call any more: its owner is going away.
  void Orphan() { on_closed_ = nullptr; }

  const std::string &host() const { return host_; }
  int port() const { return port_; }

 private:
  ControlRelay(daemon::UniqueFd local, std::string host, int port,
               std::function<void(ControlRelay *)> on_closed);
  ~ControlRelay() = default;

  static void OnLocal(uv_poll_t *handle, int status, int events);
  static void OnTcpRead(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf);
  // Puts a fresh token into the hand-off and tells the Process where its
  // client goes (CTL_REDIRECTED).
  void Redirect(ControlMsg *handoff);
  void SendToRemote(const ControlMsg &msg);
  // Writes what the TLS session has for rank 0.
  void SendRecords();

  daemon::UniqueFd local_;
  uv_poll_t poll_{};
  uv_tcp_t tcp_{};
  std::string host_;
  int port_;
  std::function<void(ControlRelay *)> on_closed_;
  std::unique_ptr<tls::PskServerSession> session_;
  std::string incoming_;  // bytes of a message from rank 0 still incomplete
  int open_handles_ = 0;
  bool closing_ = false;
};

}  // namespace ninf::server
