#include "server/data_store.h"

#include <utility>

namespace ninf::server {
namespace {

// Compares in time independent of where the strings differ: a token is a
// capability, and an early exit would tell how many leading bytes are right.
bool SameToken(const std::string &a, const std::string &b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

uint64_t DataStore::BytesOf(const std::string &owner) const {
  auto it = owners_.find(owner);
  return it == owners_.end() ? 0 : it->second.bytes;
}

Status DataStore::CheckCaps(const std::string &owner, Kind kind, uint64_t bytes) const {
  if (bytes > cap_ || counts_.bytes > cap_ - bytes)
    return Status(NINF_ERR_LIMIT, "keeping " + std::to_string(bytes) + " bytes would exceed the " +
                                      "store's cap of " + std::to_string(cap_) +
                                      " bytes (store_bytes; " + std::to_string(counts_.bytes) +
                                      " in use)");
  Usage used;
  if (auto it = owners_.find(owner); it != owners_.end()) used = it->second;
  // The owner's share: one user cannot crowd out the others.
  if (owner_caps_.entries > 0 && used.entries >= owner_caps_.entries)
    return Status(NINF_ERR_LIMIT, "this user keeps " + std::to_string(used.entries) +
                                      " entries already, its cap (store_entries_per_owner or "
                                      "[users.NAME] store_entries = " +
                                      std::to_string(owner_caps_.entries) +
                                      "): collect or release some first");
  if (kind == Kind::kResult && owner_caps_.results > 0 && used.results >= owner_caps_.results)
    return Status(NINF_ERR_LIMIT, "this user has " + std::to_string(used.results) +
                                      " two-phase results pending or uncollected, its cap "
                                      "(user_max_two_phase or [users.NAME] max_two_phase = " +
                                      std::to_string(owner_caps_.results) +
                                      "): collect some first");
  if (owner_caps_.bytes > 0 &&
      (bytes > owner_caps_.bytes || used.bytes > owner_caps_.bytes - bytes))
    return Status(NINF_ERR_LIMIT, "keeping " + std::to_string(bytes) +
                                      " bytes would exceed this user's cap (store_bytes_per_owner "
                                      "or [users.NAME] store_bytes = " +
                                      std::to_string(owner_caps_.bytes) + "; " +
                                      std::to_string(used.bytes) + " in use by this user)");
  return Status::Ok();
}

Status DataStore::Reserve(const std::string &owner, const std::string &token, Kind kind,
                          uint64_t bytes, double ttl_seconds, double now, uint64_t *id) {
  if (token.empty()) return Status(NINF_ERR_INVALID_ARGUMENT, "a stored entry needs a token");
  if (!(ttl_seconds > 0))
    return Status(NINF_ERR_INVALID_ARGUMENT, "a stored entry needs a ttl > 0");
  Expire(now);
  if (Status st = CheckCaps(owner, kind, bytes); !st.ok()) {
    ++counts_.refused;
    return st;
  }
  Entry e;
  e.id = next_id_++;
  e.token = token;
  e.owner = owner;
  e.kind = kind;
  e.bytes = bytes;
  e.expires_at = now + ttl_seconds;
  *id = e.id;
  entries_.emplace(e.id, std::move(e));
  Usage &used = owners_[owner];
  ++used.entries;
  used.bytes += bytes;
  if (kind == Kind::kResult) ++used.results;
  ++counts_.entries;
  ++counts_.stored;
  counts_.bytes += bytes;
  return Status::Ok();
}

// Finds the pending entry `id` for data of `bytes` bytes and gives back the
// room it does not need; *it is end() after an error.
Status DataStore::Ready(std::map<uint64_t, Entry>::iterator *it, uint64_t id, uint64_t bytes) {
  *it = entries_.find(id);
  if (*it == entries_.end() || (*it)->second.state != State::kPending) {
    *it = entries_.end();
    return Status(NINF_ERR_INVALID_ID, "no pending stored entry " + std::to_string(id));
  }
  Entry &e = (*it)->second;
  if (bytes > e.bytes) {
    const uint64_t reserved = e.bytes;
    Erase(*it);
    *it = entries_.end();
    ++counts_.released;
    return Status(NINF_ERR_TOO_LARGE, "stored entry " + std::to_string(id) + " got " +
                                          std::to_string(bytes) + " bytes, reserved " +
                                          std::to_string(reserved));
  }
  counts_.bytes -= e.bytes - bytes;  // the room not needed goes back
  owners_[e.owner].bytes -= e.bytes - bytes;
  e.bytes = bytes;
  e.state = State::kReady;
  return Status::Ok();
}

Status DataStore::Fill(uint64_t id, std::string memory) {
  std::map<uint64_t, Entry>::iterator it;
  NINF_RETURN_IF_ERROR(Ready(&it, id, memory.size()));
  it->second.memory = std::move(memory);
  return Status::Ok();
}

Status DataStore::Fill(uint64_t id, daemon::UniqueFd file, uint64_t bytes) {
  if (!HasDescriptorRoom())
    return Status(NINF_ERR_LIMIT, "the store holds " + std::to_string(counts_.descriptors) +
                                      " descriptors already, its cap");
  std::map<uint64_t, Entry>::iterator it;
  NINF_RETURN_IF_ERROR(Ready(&it, id, bytes));
  it->second.file = std::move(file);
  ++counts_.descriptors;
  return Status::Ok();
}

const DataStore::Entry *DataStore::Get(uint64_t id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second;
}

Status DataStore::Find(uint64_t id, const std::string &token, const std::string &owner, Kind kind,
                       double now, const Entry **out) {
  auto it = entries_.find(id);
  if (it == entries_.end()) {
    // Say "expired" to whoever proves it was theirs: the clearer error.
    auto gone = expired_.find(id);
    if (gone != expired_.end() && SameToken(gone->second, token))
      return Status(NINF_ERR_EXPIRED, "stored entry " + std::to_string(id) + " expired");
  }
  // Another kind is answered as an unknown entry: a two-phase result is
  // not a kept array, whoever holds its token.
  if (it == entries_.end() || !SameToken(it->second.token, token) || it->second.kind != kind)
    return Status(NINF_ERR_INVALID_ID, "no stored entry " + std::to_string(id) +
                                           " with this token (unknown, collected or expired)");
  if (it->second.expires_at <= now) {
    RememberExpired(it->second);
    Erase(it);
    ++counts_.expired;
    return Status(NINF_ERR_EXPIRED, "stored entry " + std::to_string(id) + " expired");
  }
  if (it->second.owner != owner)
    return Status(NINF_ERR_AUTH, "stored entry " + std::to_string(id) +
                                     " belongs to another key than this connection's");
  *out = &it->second;
  return Status::Ok();
}

bool DataStore::Release(uint64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  Erase(it);
  ++counts_.released;
  return true;
}

std::size_t DataStore::ReleaseOwner(const std::string &owner) {
  std::size_t n = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    auto next = std::next(it);
    if (it->second.owner == owner) Erase(it), ++n;
    it = next;
  }
  counts_.released += n;
  return n;
}

std::size_t DataStore::Expire(double now) {
  std::size_t n = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    auto next = std::next(it);
    if (it->second.expires_at <= now) {
      RememberExpired(it->second);
      Erase(it);
      ++n;
    }
    it = next;
  }
  counts_.expired += n;
  return n;
}

void DataStore::RememberExpired(const Entry &e) {
  expired_[e.id] = e.token;
  if (expired_.size() > kRememberExpired) expired_.erase(expired_.begin());
}

void DataStore::Erase(std::map<uint64_t, Entry>::iterator it) {
  const Entry &e = it->second;
  counts_.bytes -= e.bytes;
  --counts_.entries;
  if (e.file.get() >= 0) --counts_.descriptors;
  auto used = owners_.find(e.owner);
  if (used != owners_.end()) {
    used->second.bytes -= e.bytes;
    if (e.kind == Kind::kResult) --used->second.results;
    if (--used->second.entries == 0) owners_.erase(used);
  }
  entries_.erase(it);
}

}  // namespace ninf::server
