// Kept data (docs/transactions.md) served over the DataStore: two-phase
// calls reserve an entry for their result at CALL and hand it over as a
// memfd (CTL_KEEP) once computed; COLLECT sends it, once, to whoever holds
// the ticket and the submitter's key, RELEASE frees it. Transaction blocks
// keep arrays (CTL_KEEP, answered CTL_KEPT) that another call's executable
// reads with FETCH, server to server, authenticated with the block's key
// (CTL_PROVE: this service makes the proof for its own executables). The
// policy (caps, expiry, owners, kinds) is DataStore's (data_store.h); this
// service reads requests and control messages and answers them, and decides
// whether an entry's bytes are kept in memory or as a descriptor (small
// ones, and all once the descriptor budget is spent, in memory: a store of
// many small results costs no descriptor each). Single-threaded, on the
// daemon's loop.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "daemon/connection.h"
#include "daemon/unique_fd.h"
#include "protocol/auth.h"
#include "protocol/control.h"
#include "protocol/status.h"
#include "server/data_store.h"
#include "server/fetch_policy.h"
#include "server/job.h"
#include "server/settings.h"
#include "server/stats.h"
#include "server/user_policy.h"

namespace ninf::server {

class KeptDataService {
 public:
  // `settings` is the server's and outlives the service (reloads change it
  // in place); the store's cap is its store_bytes now. `epoch` starts the
  // store's clock. `users` is the daemon's user policy, which every read
  // asks who owns what.
  KeptDataService(const Settings &settings, const UserPolicy &users, Clock::time_point epoch);
  KeptDataService(const KeptDataService &) = delete;
  KeptDataService &operator=(const KeptDataService &) = delete;

  // A two-phase CALL: the store entry for its result, `keep_bytes` long,
  // owned by params->owner; fills in the entry's id, token and lifetime.
  // Errors: NINF_ERR_INVALID_ARGUMENT (a handle's call), NINF_ERR_TOO_LARGE,
  // the store's refusals (over the cap), NINF_ERR_INTERNAL.
  Status ReserveResult(uint64_t keep_bytes, CallParams *params);

  // FRAME_COLLECT, FRAME_RELEASE (from clients) and FRAME_FETCH (from
  // executables, with the owner's key): answered on `conn`. Each needs the
  // entry's token and its owner's key; COLLECT reads only two-phase
  // results (and frees one it has sent), FETCH only kept arrays.
  void HandleCollect(daemon::Connection &conn, std::string_view body);
  void HandleRelease(daemon::Connection &conn, std::string_view body);
  void HandleFetch(daemon::Connection &conn, std::string_view body);

  // CTL_KEEP: `job`'s executable hands over `data` (a memfd): a two-phase
  // call's result, or one array (answered with KeptAnswer).
  void OnKeep(Job &job, const ControlMsg &msg, daemon::UniqueFd data);
  // CTL_PROVE: `job`'s executable authenticates to the ninfd a data
  // reference names, with the key of the job's client. Answered with
  // ProvedAnswer: the client proof once the daemon's proof is right;
  // NINF_ERR_AUTH when it is not (not a ninfd holding the caller's key),
  // for a call without a key, or when the key is no longer this daemon's
  // or no longer the call's user's (revoked).
  void OnProve(Job &job, const ControlMsg &msg);
  // CTL_FETCH_ASK: answered with FetchAnswer, by fetch_policy.h over what
  // the daemon's `peers` gathers now (unset: nothing is known, and every
  // address but fetch_from's is refused).
  void OnFetchAsk(Job &job, const ControlMsg &msg);
  // `refresh`: asks for a fresh list when an address may be missing from a
  // stale one (MayFetchFrom's NINF_ERR_TIMEOUT).
  void set_fetch_peers(std::function<FetchPeers()> peers, std::function<void()> refresh) {
    peers_ = std::move(peers);
    refresh_ = std::move(refresh);
  }
  // A two-phase job (only) ends: a result never handed over becomes an ERROR
  // frame for its collector (or is dropped if the client was told already).
  void SettleResult(Job &job, const Status &why);

  // The watchdog: frees the entries whose time is up.
  void Expire();
  // The store's part of the gauges.
  void AddGauges(Gauges *g) const;
  // Frees every entry of `user` (revoked); returns how many.
  std::size_t ReleaseUser(const std::string &user) { return store_.ReleaseOwner(user); }
  // The bytes `user` keeps now.
  uint64_t BytesOf(const std::string &user) const { return store_.BytesOf(user); }

 private:
  // The store's clock: seconds since the server started.
  double Now() const;
  // Reserves an entry under the owner's quotas in the settings now.
  Status Reserve(const std::string &owner, const std::string &token, DataStore::Kind kind,
                 uint64_t bytes, double ttl_seconds, uint64_t *id);
  // Fills entry `id` from the memfd `data` of `bytes` bytes: copied into
  // memory (and the memfd closed) when small or when the descriptor budget
  // is spent, else kept as the descriptor.
  Status FillFrom(uint64_t id, daemon::UniqueFd data, uint64_t bytes);

  const Settings &settings_;
  const UserPolicy &users_;
  std::function<FetchPeers()> peers_;
  std::function<void()> refresh_;
  Clock::time_point epoch_;
  DataStore store_;
  uint64_t served_bytes_ = 0;
};

}  // namespace ninf::server
