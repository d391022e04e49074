// A reverse ninfd's side of the relay (ninfd --reverse --relay HOST:PORT,
// docs/relay.md): a thread of its own that keeps one outbound control
// connection to ninf-relay and dials back whenever the relay has a client.
//
//   connect (+ TLS with tls_ca, + authenticate with the daemon's key) ->
//                         RELAY_REGISTER{name,
//                         instance} -> ACK; the instance is random per ninfd,
//                         so the relay tells this ninfd reconnecting from a
//                         second ninfd given the same name
//   RELAY_DIAL{token}  -> a new connection to the relay, authenticated with the
//                         same key, RELAY_DATA{token} (plaintext: the bytes
//                         after it are the client's TLS with this ninfd, which
//                         the relay moves untouched), then the socket goes to
//                         the loop (Server::Accept), to be served exactly like
//                         an accepted TCP connection
//   every ACK's report_ms: RELAY_REGISTER again (keep-alive; no ACK in three
//                         periods: the relay is gone)
//   any failure        -> close, wait (0.5 s doubling to 5 s), connect again
//
// A blocking thread, as MetaReporter (meta_reporter.h): the exchange is
// small, and a relay that is down or slow never stalls the loop. State
// changes are logged (event=relay_state state=connected|registered|lost).
#pragma once

#include <uv.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "daemon/unique_fd.h"
#include "ninf.pb.h"
#include "protocol/address.h"
#include "protocol/auth.h"
#include "protocol/status.h"
#include "protocol/tls.h"
#include "protocol/wire.h"

namespace ninf::server {

class RelayLink {
 public:
  struct Config {
    HostPort relay;
    std::string key_file;  // "": no authentication
    std::string name;      // registered under this name
    // tls.ca set (ninfd's tls_ca): the control connection is TLS 1.3,
    // verified for relay.host, before the key handshake; tls.cert/key
    // (ninfd's tls_cert/tls_key) are shown if the relay asks for them.
    tls::ClientFiles tls;
  };
  // Called on the loop for each dialed data connection: a non-blocking,
  // close-on-exec TCP socket (TCP_NODELAY) whose next bytes are a client's.
  using AcceptFn = std::function<void(daemon::UniqueFd fd, const std::string &peer)>;

  RelayLink(uv_loop_t *loop, Config config, AcceptFn accept);
  ~RelayLink();  // Stop()
  RelayLink(const RelayLink &) = delete;
  RelayLink &operator=(const RelayLink &) = delete;

  // Registers once before returning, then keeps the link on its thread.
  // A relay that cannot be reached yet is tried again there; a relay that
  // refuses the name as another server's (NINF_ERR_CONFIG: its key or
  // another live ninfd holds it), or whose TLS does not match ninfd's
  // (tls_ca set and the relay has none, or the other way), fails the start. Errors: that refusal,
  // NINF_ERR_SERVER when the loop's wake-up handle cannot be made.
  Status Start();
  // Ends the thread (at most one connect timeout) and closes the wake-up
  // handle; the object must live until the loop has run its close callback.
  void Stop();

 private:
  // The thread: serves `first` (may be null), then reconnects until Stop().
  void Run(std::unique_ptr<Channel> first);
  // Connects, authenticates and registers: the control connection, or why not.
  Status Open(std::unique_ptr<Channel> *out);
  // The TLS session of the control connection (config_.tls.ca set).
  // Errors: NINF_ERR_CONFIG when the relay speaks no TLS, else the
  // handshake's (tls::Connect).
  Status StartTls(Channel *ch);
  // One registered control connection's life: returns when it fails or
  // Stop() is asked.
  Status Serve(Channel &ch);
  // What each registration and keep-alive sends.
  wire::RelayRegister Registration() const;
  // Opens a data connection for `token` and queues it for the loop.
  Status Dial(const std::string &token);
  static void OnDialed(uv_async_t *async);

  uv_loop_t *loop_;
  Config config_;
  AcceptFn accept_;
  std::string instance_;                 // RelayRegister.instance: random, drawn at Start()
  std::chrono::milliseconds period_{0};  // the keep-alive the relay asked for
  auth::KeyRing keys_;                   // read again by each Open(): the thread's, once it runs
  uv_async_t async_{};
  bool async_open_ = false;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  int session_fd_ = -1;                  // the control connection, shut down by Stop()
  std::deque<daemon::UniqueFd> dialed_;  // for the loop
};

}  // namespace ninf::server
