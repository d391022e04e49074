#include "server/data_store.h"

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

Status DataStore::Reserve(const std::string &owner, const std::string &token, uint64_t bytes,
                          double ttl_seconds, double now, uint64_t *id) {
  if (token.empty()) return Status(NINF_ERR_INVALID_ARGUMENT, "a stored entry needs a token");
  if (!(ttl_seconds > 0))
    return Status(NINF_ERR_INVALID_ARGUMENT, "a stored entry needs a ttl > 0");
  Expire(now);
  if (bytes > cap_ || counts_.bytes > cap_ - bytes) {
    ++counts_.refused;
    return Status(NINF_ERR_LIMIT, "keeping " + std::to_string(bytes) + " bytes would exceed the " +
                                      "store's cap of " + std::to_string(cap_) + " bytes (" +
                                      std::to_string(counts_.bytes) + " in use)");
  }
  Entry e;
  e.id = next_id_++;
  e.token = token;
  e.owner = owner;
  e.bytes = bytes;
  e.expires_at = now + ttl_seconds;
  *id = e.id;
  entries_.emplace(e.id, std::move(e));
  ++counts_.entries;
  ++counts_.stored;
  counts_.bytes += bytes;
  return Status::Ok();
}

Status DataStore::Fill(uint64_t id, daemon::UniqueFd data, uint64_t bytes) {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.state != State::kPending)
    return Status(NINF_ERR_INVALID_ID, "no pending stored entry " + std::to_string(id));
  if (bytes > it->second.bytes) {
    const uint64_t reserved = it->second.bytes;
    Erase(it);
    ++counts_.released;
    return Status(NINF_ERR_TOO_LARGE, "stored entry " + std::to_string(id) + " got " +
                                          std::to_string(bytes) + " bytes, reserved " +
                                          std::to_string(reserved));
  }
  Entry &e = it->second;
  counts_.bytes -= e.bytes - bytes;  // the room not needed goes back
  e.bytes = bytes;
  e.data = std::move(data);
  e.state = State::kReady;
  return Status::Ok();
}

Status DataStore::Find(uint64_t id, const std::string &token, const std::string &owner, double now,
                       const Entry **out) {
  return Lookup(id, token, &owner, now, out);
}

Status DataStore::FindByToken(uint64_t id, const std::string &token, double now,
                              const Entry **out) {
  return Lookup(id, token, nullptr, now, out);
}

const DataStore::Entry *DataStore::Get(uint64_t id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second;
}

Status DataStore::Lookup(uint64_t id, const std::string &token, const std::string *owner,
                         double now, const Entry **out) {
  auto it = entries_.find(id);
  if (it == entries_.end()) {
    // Say "expired" to whoever proves it was theirs: the clearer error.
    auto gone = expired_.find(id);
    if (gone != expired_.end() && SameToken(gone->second, token))
      return Status(NINF_ERR_EXPIRED, "stored entry " + std::to_string(id) + " expired");
  }
  if (it == entries_.end() || !SameToken(it->second.token, token))
    return Status(NINF_ERR_INVALID_ID, "no stored entry " + std::to_string(id) +
                                           " with this token (unknown, collected or expired)");
  if (it->second.expires_at <= now) {
    RememberExpired(it->second);
    Erase(it);
    ++counts_.expired;
    return Status(NINF_ERR_EXPIRED, "stored entry " + std::to_string(id) + " expired");
  }
  if (owner && it->second.owner != *owner)
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
  counts_.bytes -= it->second.bytes;
  --counts_.entries;
  entries_.erase(it);
}

}  // namespace ninf::server
