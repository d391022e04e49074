// ninfd's client connection: the shared daemon::Connection plus what only
// ninfd does with one, the TLS hand-over of a call: FRAME_HANDOVER with a
// fresh key as the last frame of ninfd's session, and the key the
// executable gets with the socket (Job::Handoff, CTL_HANDOFF). ninfd opens
// every connection as one (Server::Accept), so a daemon::Connection of
// ninfd's is always one of these (Of). Builds on daemon/connection.h.
#pragma once

#include <cstdint>
#include <string>

#include "daemon/connection.h"
#include "protocol/control.h"
#include "protocol/status.h"
#include "protocol/tls.h"

namespace ninf::server {

class Job;

class ClientConnection : public daemon::Connection {
 public:
  // Built by daemon::Connection::Open<ClientConnection>.
  ClientConnection(daemon::UniqueFd fd, uint64_t id, std::string peer, Delegate *delegate,
                   Timeouts timeouts, const daemon::RequestRules &rules)
      : daemon::Connection(std::move(fd), id, std::move(peer), delegate, timeouts, rules) {}

  // One of ninfd's connections, as it was opened.
  static ClientConnection &Of(daemon::Connection &conn) {
    return static_cast<ClientConnection &>(conn);
  }

  // Parked, TLS active: queues FRAME_HANDOVER with a fresh key (wiped from
  // the output as it is written). Errors: NINF_ERR_INTERNAL (no TLS session
  // to hand over, or no randomness).
  Status SendHandover();
  bool handover_sent() const { return handover_sent_; }
  // The key FRAME_HANDOVER carried, or FRAME_REDIRECT will (for CTL_HANDOFF).
  const tls::Psk &handover_psk() const { return psk_; }

  // A redirected call on a TLS connection (server/control_relay.h): a fresh
  // key for the client's session with rank 0. Errors: NINF_ERR_INTERNAL (no
  // randomness).
  Status NewRedirectKey();
  // Queues FRAME_REDIRECT to rank 0's address with the call's token from
  // `redirected` (CTL_REDIRECTED), and over TLS the key of NewRedirectKey:
  // inside ninfd's session, so that only the client reads either.
  void SendRedirect(const ControlMsg &redirected);

  // The job the connection was handed to with its CALL (Scheduler::Submit),
  // until the job lets it go (Job::detach_conn); null otherwise.
  Job *job() const { return job_; }
  void set_job(Job *job) { job_ = job; }

  // The TLS hand-over's last step, once FRAME_HANDOVER is out.
  using daemon::Connection::SealTls;

 private:
  Job *job_ = nullptr;
  bool handover_sent_ = false;
  bool redirect_key_ = false;  // psk_ is the redirected session's key
  tls::Psk psk_{};
};

}  // namespace ninf::server
