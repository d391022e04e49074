// ninfd's store of data kept for clients: the results of two-phase calls
// until they are collected, and the intermediates of transaction blocks
// until the block's later calls have read them (docs/transactions.md).
// Policy only: ids, owners, kinds, sizes, expiry, the caps and the counts
// the stats reply shows, with the clock passed in. The bytes are held
// either in memory or as a descriptor (a memfd) the store owns but never
// reads; how many entries may hold a descriptor is capped too, so a store
// full of small entries costs no descriptor each (KeptDataService decides
// which form an entry takes). Unit-tested in tests/server/data_store_test.cc.
//
// Life of an entry:
//
//   Reserve   room counted against the caps, state kPending (being made)
//   Fill      the data arrives (bytes or a descriptor), state kReady
//   Find      by id, with the token, the owner that reserved it and its kind
//   Release   freed: collected, the block ended, or the owner went away
//   Expire    freed when its time is up, whatever its state
//
// Authorization follows the data: an entry is found only by its owner (the
// key id it was reserved under; "" for a daemon without keys, where the
// token alone is the credential) holding its token, and only as the kind it
// is: a two-phase result is never read as a kept array, nor the reverse.
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
  // kResult: a two-phase call's RESULT frame, read by COLLECT. kArray: a
  // transaction block's array, read by FETCH.
  enum class Kind { kResult, kArray };

  struct Entry {
    uint64_t id = 0;
    std::string token;
    std::string owner;
    Kind kind = Kind::kArray;
    uint64_t bytes = 0;
    double expires_at = 0;
    State state = State::kPending;
    // kReady: the bytes, in `memory`, or in `file` from offset 0 when
    // `file` is open.
    std::string memory;
    daemon::UniqueFd file;
  };

  // What one owner may keep at once (0: no cap of its own; store_bytes
  // still holds).
  struct OwnerCaps {
    uint64_t entries = 0;
    uint64_t bytes = 0;
    uint64_t results = 0;  // entries of kind kResult (two-phase results)
  };

  struct Counts {
    uint64_t entries = 0;
    uint64_t bytes = 0;        // reserved, pending and ready
    uint64_t descriptors = 0;  // entries holding a descriptor
    uint64_t stored = 0;       // entries ever reserved
    uint64_t refused = 0;      // reservations over a cap
    uint64_t expired = 0;      // entries freed by Expire
    uint64_t released = 0;     // entries freed by Release / ReleaseOwner
  };

  // `cap_bytes`: what all entries may hold together (0: nothing is kept).
  // `max_descriptors`: how many entries may hold a descriptor at once.
  explicit DataStore(uint64_t cap_bytes, uint64_t max_descriptors = 64)
      : cap_(cap_bytes), max_descriptors_(max_descriptors) {}

  // The per-owner caps of the reservations from now on (settings reload).
  void set_owner_caps(OwnerCaps caps) { owner_caps_ = caps; }

  // Reserves `bytes` of `kind` for `owner` until now + ttl_seconds under
  // `token` (chosen by the caller: random for the daemon). Expired entries
  // are dropped first. Errors: NINF_ERR_LIMIT when the store's cap or the
  // owner's would be exceeded (the message names the cap and its setting),
  // NINF_ERR_INVALID_ARGUMENT for an empty token or a ttl <= 0.
  Status Reserve(const std::string &owner, const std::string &token, Kind kind, uint64_t bytes,
                 double ttl_seconds, double now, uint64_t *id);

  // The data of a pending entry has arrived, as bytes in memory or as a
  // descriptor of `bytes` bytes (only while HasDescriptorRoom()). Errors:
  // NINF_ERR_INVALID_ID (unknown, expired or already filled),
  // NINF_ERR_TOO_LARGE when it is larger than reserved (the entry is then
  // released), NINF_ERR_LIMIT for a descriptor over the cap (the entry
  // stays pending).
  Status Fill(uint64_t id, std::string memory);
  Status Fill(uint64_t id, daemon::UniqueFd file, uint64_t bytes);
  bool HasDescriptorRoom() const { return counts_.descriptors < max_descriptors_; }

  // The entry `id`, if `token`, `owner` and `kind` match it and it has not
  // expired. Errors: NINF_ERR_INVALID_ID (unknown, wrong token or another
  // kind: an id alone tells nothing), NINF_ERR_EXPIRED (its time is up; it
  // is freed now), NINF_ERR_AUTH (right token, another owner).
  Status Find(uint64_t id, const std::string &token, const std::string &owner, Kind kind,
              double now, const Entry **out);
  // The entry `id` (no check: for the daemon's own bookkeeping), or null.
  const Entry *Get(uint64_t id) const;

  // Frees one entry (false if there is none), or every entry of `owner`.
  bool Release(uint64_t id);
  std::size_t ReleaseOwner(const std::string &owner);

  // Frees every entry whose time is up; returns how many.
  std::size_t Expire(double now);

  const Counts &counts() const { return counts_; }
  // The bytes `owner` keeps now.
  uint64_t BytesOf(const std::string &owner) const;
  uint64_t cap_bytes() const { return cap_; }
  uint64_t max_descriptors() const { return max_descriptors_; }

 private:
  struct Usage {
    uint64_t entries = 0;
    uint64_t bytes = 0;
    uint64_t results = 0;
  };

  Status CheckCaps(const std::string &owner, Kind kind, uint64_t bytes) const;
  Status Ready(std::map<uint64_t, Entry>::iterator *it, uint64_t id, uint64_t bytes);
  void Erase(std::map<uint64_t, Entry>::iterator it);
  void RememberExpired(const Entry &e);

  uint64_t cap_;
  uint64_t max_descriptors_;
  OwnerCaps owner_caps_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, Entry> entries_;
  // What each owner keeps now (an owner with nothing has no row).
  std::map<std::string, Usage> owners_;
  // The tokens of the latest expired entries (at most kRememberExpired), so
  // that a late collector hears "expired" rather than "unknown".
  static constexpr std::size_t kRememberExpired = 1024;
  std::map<uint64_t, std::string> expired_;
  Counts counts_;
};

}  // namespace ninf::server
