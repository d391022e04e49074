// ninfd's store of data kept for clients: the results of two-phase calls
// until they are collected, and the intermediates of transaction blocks
// until the block's later calls have read them (docs/transactions.md).
// Policy only: ids, owners, sizes, expiry, the memory cap and the counts
// the stats reply shows, with the clock passed in; the bytes themselves
// are a descriptor (a memfd) the store owns but never reads. Unit-tested
// in tests/server/data_store_test.cc.
//
// Life of an entry:
//
//   Reserve   room counted against the cap, state kPending (being made)
//   Fill      the data arrives (its descriptor), state kReady
//   Find      by id, with the token and the owner that reserved it
//   Release   freed: collected, the block ended, or the owner went away
//   Expire    freed when its time is up, whatever its state
//
// An entry is found only with its token (a capability handed to whoever
// reserved it) and by its owner (the key id it was reserved under; "" for
// a daemon without keys, where the token alone is the credential).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "daemon/unique_fd.h"
#include "protocol/status.h"

namespace ninf::server {

class DataStore {
 public:
  enum class State { kPending, kReady };

  struct Entry {
    uint64_t id = 0;
    std::string token;
    std::string owner;
    uint64_t bytes = 0;
    double expires_at = 0;
    State state = State::kPending;
    daemon::UniqueFd data;  // kReady: the bytes, from offset 0
  };

  struct Counts {
    uint64_t entries = 0;
    uint64_t bytes = 0;     // reserved, pending and ready
    uint64_t stored = 0;    // entries ever reserved
    uint64_t refused = 0;   // reservations over the cap
    uint64_t expired = 0;   // entries freed by Expire
    uint64_t released = 0;  // entries freed by Release / ReleaseOwner
  };

  // `cap_bytes`: what all entries may hold together (0: nothing is kept).
  explicit DataStore(uint64_t cap_bytes) : cap_(cap_bytes) {}

  // Reserves `bytes` for `owner` until now + ttl_seconds under `token`
  // (chosen by the caller: random for the daemon). Expired entries are
  // dropped first. Errors: NINF_ERR_LIMIT when the cap would be exceeded,
  // NINF_ERR_INVALID_ARGUMENT for an empty token or a ttl <= 0.
  Status Reserve(const std::string &owner, const std::string &token, uint64_t bytes,
                 double ttl_seconds, double now, uint64_t *id);

  // The data of a pending entry has arrived. Errors: NINF_ERR_INVALID_ID
  // (unknown, expired or already filled), NINF_ERR_TOO_LARGE when it is
  // larger than reserved (the entry is then released).
  Status Fill(uint64_t id, daemon::UniqueFd data, uint64_t bytes);

  // The entry `id`, if `token` and `owner` match it and it has not expired.
  // Errors: NINF_ERR_INVALID_ID (unknown or wrong token: an id alone tells
  // nothing), NINF_ERR_EXPIRED (its time is up; it is freed now),
  // NINF_ERR_AUTH (right token, another owner).
  Status Find(uint64_t id, const std::string &token, const std::string &owner, double now,
              const Entry **out);
  // The same without the owner check: a server fetching a block's array
  // for another call of the block proves itself with the token alone.
  Status FindByToken(uint64_t id, const std::string &token, double now, const Entry **out);
  // The entry `id` (no check: for the daemon's own bookkeeping), or null.
  const Entry *Get(uint64_t id) const;

  // Frees one entry (false if there is none), or every entry of `owner`.
  bool Release(uint64_t id);
  std::size_t ReleaseOwner(const std::string &owner);

  // Frees every entry whose time is up; returns how many.
  std::size_t Expire(double now);

  const Counts &counts() const { return counts_; }
  uint64_t cap_bytes() const { return cap_; }

 private:
  void Erase(std::map<uint64_t, Entry>::iterator it);
  void RememberExpired(const Entry &e);
  Status Lookup(uint64_t id, const std::string &token, const std::string *owner, double now,
                const Entry **out);

  uint64_t cap_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, Entry> entries_;
  // The tokens of the latest expired entries (at most kRememberExpired), so
  // that a late collector hears "expired" rather than "unknown".
  static constexpr std::size_t kRememberExpired = 1024;
  std::map<uint64_t, std::string> expired_;
  Counts counts_;
};

}  // namespace ninf::server
