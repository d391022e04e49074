// ninfd's side of the metaserver (ninfd --metaserver HOST:PORT --site NAME):
// a thread of its own that keeps the server registered with ninf-meta and
// reports its load. Also keeps the list of servers the metaserver sends
// back, for fetch_policy.h (FetchPeersOf).
//
//   connect (+ authenticate with the daemon's key) -> REGISTER -> ACK
//   then LOAD -> ACK  whenever the load changed beyond the band, and at
//                     least every report period the metaserver asked for
//   ACK register_again (the metaserver restarted or the lease ran out)
//                  -> REGISTER again on the same connection
//   any failure    -> close, wait (0.5 s doubling to 5 s), connect again
//
// A blocking thread rather than the event loop: the exchange is small and
// strictly request/reply, the loop never waits on the metaserver, and a
// metaserver that is down or slow costs the daemon nothing but this
// thread's retries; direct clients are served all the same. The loop hands
// over snapshots (Publish); the thread decides when to send them.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ninf.pb.h"
#include "protocol/address.h"
#include "protocol/status.h"
#include "protocol/tls.h"
#include "server/fetch_policy.h"

namespace ninf {
class Channel;
}

namespace ninf::server {

class MetaReporter {
 public:
  struct Config {
    HostPort metaserver;
    std::string key_file;                   // "": no authentication
    wire::ServerRegistration registration;  // flops_per_second filled in by the calibration
    int threads_per_job = 1;
    // tls.ca set (ninfd's tls_ca): TLS 1.3 verified for metaserver.host,
    // before the key handshake; tls.cert/key (ninfd's tls_cert/tls_key),
    // when set, answer a metaserver that asks for a client certificate.
    tls::ClientFiles tls;
  };

  explicit MetaReporter(Config config);
  ~MetaReporter();  // Stop()
  MetaReporter(const MetaReporter &) = delete;
  MetaReporter &operator=(const MetaReporter &) = delete;

  void Start();
  // Asks the thread to end and joins it (at most one connect timeout).
  void Stop();

  // The current load, from the loop. Wakes the thread when it differs from
  // what was last sent beyond the band: another count of running or queued
  // calls, or predicted work changed by more than a quarter.
  void Publish(const wire::LoadReport &load);
  // A new registry (SIGHUP): registers again with the new function list.
  void UpdateRegistration(const wire::ServerRegistration &registration);
  // The daemon's key file after SIGHUP: a changed path ends the current
  // session, and the next one authenticates with the new file (the file
  // itself is read at every connect, so a key rotated in place needs none).
  void UpdateKeyFile(const std::string &key_file);

  // The servers the metaserver listed in its last acknowledgement, as it
  // gave them and as the names among them resolve ("ip:port"): where
  // ninfd's calls may read kept data from (server/fetch_policy.h). Empty
  // until the first acknowledgement; kept while the metaserver is away.
  std::set<std::string> Listed() const;
  // Asks for a fresh list now: the next report goes at once (a data
  // reference named a server that may have registered since the last one).
  void RefreshListed();

  // What ninfd logs (event=metaserver_auth_failed) when ninf-meta at
  // `metaserver` refused its key handshake. ninf-meta's own words are
  // written for its clients ("give the client the server's key"), and here
  // ninfd is the client: this names ninfd's setting and which side needs
  // which key. `has_key`: ninfd has a key_file (`key_file`, proving itself
  // with its first key); `said`: ninf-meta's error. A pure function.
  static std::string AuthFailureMessage(bool has_key, const std::string &key_file,
                                        const std::string &metaserver, const std::string &said);

  // Calls' speed on this host: a short dense matrix product on one thread
  // (about 50 ms), times the threads one call may use. Flop/s.
  static double CalibrateFlops(int threads);

 private:
  void Run();
  // One connection's life: returns when it fails or Stop() is asked.
  // *key_refused: the failure was the key handshake's (the metaserver
  // refused ninfd's key, or its lack of one), not the metaserver's absence.
  Status Session(bool *key_refused);
  // The session's exchanges once connected: REGISTER (again whenever the
  // registration changed or the metaserver asks), then LOAD every period
  // the metaserver's acknowledgement gives.
  Status Report(Channel &ch, bool *key_refused);
  Status Register(Channel &ch, bool first_request, bool *key_refused,
                  std::chrono::milliseconds *period);
  enum class Next { kStop, kRegister, kReport };
  // Waits out `period` or a change; kReport with the load to send.
  Next WaitToReport(std::chrono::milliseconds period, wire::LoadReport *report);
  // The TLS handshake on the session's connection, then ch speaks TLS.
  Status StartTls(Channel *ch);
  bool Significant(const wire::LoadReport &now, const wire::LoadReport &sent) const;
  // Keeps `ack`'s list of servers (resolving names, on this thread).
  void TakeListed(const wire::MetaAck &ack);

  Config config_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool registration_changed_ = false;
  bool key_changed_ = false;  // UpdateKeyFile: retry without waiting out the backoff
  bool load_changed_ = false;
  wire::LoadReport load_;                  // the latest snapshot
  wire::LoadReport sent_;                  // the last one sent
  int session_fd_ = -1;                    // the open connection, shut down by Stop()
  std::vector<std::string> listed_given_;  // the last ack's list, to resolve only changes
  uint64_t listed_version_ = 0;            // its MetaAck.servers_version (0: none)
  std::set<std::string> listed_;           // Listed()
  std::chrono::steady_clock::time_point last_refresh_;  // RefreshListed's last wake
};

// Where ninfd's calls may read kept data from now (server/fetch_policy.h):
// ninfd itself at `port` on every address of this host and at `unix_path`
// ("" if none), and what `reporter` (null without a metaserver) was last
// sent; KeptDataService adds fetch_from.
FetchPeers FetchPeersOf(int port, const std::string &unix_path, const MetaReporter *reporter);

}  // namespace ninf::server
