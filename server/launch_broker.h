// ninfd's side of the connect-back of launched executables
// (protocol/launch.h): a Unix-domain stream socket in a directory of its
// own (mode 0700), and the control channels waiting to be claimed, one per
// launched process, each under a one-time 128-bit token.
//
//   Process::Start      Expect(child end of the socketpair) -> token
//   launcher, rank 0    connect, "TOKEN\n"
//   LaunchBroker        sends the channel (SCM_RIGHTS), forgets the token
//   Process exits       Forget(token): an unclaimed channel is closed
//
// A connection that says nothing useful within kClaimTimeoutMs, or sends an
// unknown token, is closed without an answer. Created on first use (most
// servers launch nothing), on the daemon's loop; single-threaded.
//
// With a TCP address (`launch_address`) it listens there too. A claim over
// TCP says "ID PORT" (the token's id, protocol/launch.h LaunchId, and rank
// 0's port for redirected clients) and keeps its connection: the broker
// answers "+" and joins it to the channel with a ControlRelay
// (control_relay.h), whose TLS session is keyed by the token (LaunchKey),
// instead of sending the descriptor.
#pragma once

#include <uv.h>

#include <map>
#include <set>
#include <string>

#include "daemon/unique_fd.h"
#include "protocol/address.h"
#include "protocol/status.h"
#include "server/control_relay.h"

namespace ninf::server {

class LaunchBroker {
 public:
  explicit LaunchBroker(uv_loop_t *loop) : loop_(loop) {}
  ~LaunchBroker();
  LaunchBroker(const LaunchBroker &) = delete;
  LaunchBroker &operator=(const LaunchBroker &) = delete;

  // Creates the directory and listens; also on `tcp` when it has a host
  // (port 0: any). Errors: NINF_ERR_EXECUTABLE (the launched executables
  // could never reach ninfd).
  Status Start(const HostPort &tcp = {});

  // The socket's path, for NINF_LAUNCH_SOCKET.
  const std::string &path() const { return path_; }
  // "host:port" of the TCP listener, for NINF_LAUNCH_ADDRESS ("" if none).
  const std::string &tcp_address() const { return tcp_address_; }

  // Keeps `channel` for the process that will present the returned token.
  std::string Expect(daemon::UniqueFd channel);
  // The process is gone: its channel, if still unclaimed, is closed.
  void Forget(const std::string &token);

  // Stops listening, closes the unclaimed channels and removes the socket
  // and its directory. The loop must run once more for the handles to
  // close.
  void Close();

  std::size_t waiting() const { return channels_.size(); }
  // Executables claimed over TCP whose channel is open.
  std::size_t relayed() const { return relays_.size(); }

 private:
  struct Claim;  // one connection presenting its token
  static void OnConnection(uv_stream_t *server, int status);
  static void OnTcpConnection(uv_stream_t *server, int status);
  void Accept(uv_stream_t *server, bool tcp);
  void Answer(Claim *claim);
  void Relay(Claim *claim, daemon::UniqueFd channel, const std::string &token, int port);
  Status ListenTcp(const HostPort &tcp);

  uv_loop_t *loop_;
  uv_pipe_t listener_{};
  bool listening_ = false;
  uv_tcp_t tcp_listener_{};
  bool tcp_listening_ = false;
  std::string dir_;
  std::string path_;
  std::string tcp_address_;
  std::map<std::string, daemon::UniqueFd> channels_;  // by token
  std::map<std::string, std::string> tokens_;         // the tokens of channels_, by LaunchId
  std::set<Claim *> claims_;                          // connections still open
  std::set<ControlRelay *> relays_;
};

}  // namespace ninf::server
