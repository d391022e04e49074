// ninfd's store of kept data (server/data_store.h) on its own: the caps
// (the store's, each owner's, the descriptors'), tokens, owners and kinds,
// expiry, and what the counts say.
#include "server/data_store.h"

#include <unistd.h>

#include <catch2/catch.hpp>

using ninf::Status;
using ninf::daemon::UniqueFd;
using ninf::server::DataStore;

namespace {

constexpr DataStore::Kind kArray = DataStore::Kind::kArray;
constexpr DataStore::Kind kResult = DataStore::Kind::kResult;

// A descriptor to stand for stored bytes.
UniqueFd SomeFd() { return UniqueFd(::dup(0)); }

}  // namespace

TEST_CASE("store_reserve_fill_find_release", "[store]") {
  DataStore store(1000);
  uint64_t id = 0;
  REQUIRE(store.Reserve("alice", "t0k3n", kArray, 600, 10, 0, &id).ok());
  CHECK(store.counts().bytes == 600);
  const DataStore::Entry *e = nullptr;
  REQUIRE(store.Find(id, "t0k3n", "alice", kArray, 1, &e).ok());
  CHECK(e->state == DataStore::State::kPending);
  REQUIRE(store.Fill(id, SomeFd(), 400).ok());
  CHECK(store.counts().bytes == 400);  // the room not used goes back
  CHECK(store.counts().descriptors == 1);
  REQUIRE(store.Find(id, "t0k3n", "alice", kArray, 2, &e).ok());
  CHECK(e->state == DataStore::State::kReady);
  CHECK(e->file.get() >= 0);
  CHECK(store.Fill(id, SomeFd(), 10).code() == NINF_ERR_INVALID_ID);  // filled once
  CHECK(store.Release(id));
  CHECK_FALSE(store.Release(id));
  CHECK(store.Find(id, "t0k3n", "alice", kArray, 3, &e).code() == NINF_ERR_INVALID_ID);
  CHECK(store.counts().entries == 0);
  CHECK(store.counts().bytes == 0);
  CHECK(store.counts().descriptors == 0);
  CHECK(store.counts().released == 1);
}

TEST_CASE("store_cap_refuses_and_frees_room", "[store]") {
  DataStore store(1000);
  uint64_t a = 0, b = 0, c = 0;
  REQUIRE(store.Reserve("x", "ta", kArray, 700, 10, 0, &a).ok());
  CHECK(store.Reserve("x", "tb", kArray, 400, 10, 0, &b).code() == NINF_ERR_LIMIT);
  CHECK(store.counts().refused == 1);
  REQUIRE(store.Reserve("x", "tb", kArray, 300, 10, 0, &b).ok());  // exactly the cap
  CHECK(store.Reserve("y", "tc", kArray, 1, 10, 0, &c).code() == NINF_ERR_LIMIT);
  // Expired entries make room at the next reservation.
  REQUIRE(store.Reserve("y", "tc", kArray, 700, 10, 10.5, &c).ok());
  CHECK(store.counts().expired == 2);
  CHECK(store.counts().bytes == 700);
  // Freed by expiry, an entry is still "expired" to its token's holder,
  // and unknown to anyone else.
  const DataStore::Entry *e = nullptr;
  CHECK(store.Find(a, "ta", "x", kArray, 11, &e).code() == NINF_ERR_EXPIRED);
  CHECK(store.Find(a, "tz", "x", kArray, 11, &e).code() == NINF_ERR_INVALID_ID);
  // A cap of 0 keeps nothing; sizes near 2^64 do not wrap.
  DataStore none(0);
  CHECK(none.Reserve("x", "t", kArray, 1, 10, 0, &a).code() == NINF_ERR_LIMIT);
  CHECK(store.Reserve("x", "t", kArray, ~0ull, 10, 11, &a).code() == NINF_ERR_LIMIT);
}

TEST_CASE("store_token_owner_and_kind_guard_entries", "[store]") {
  DataStore store(1000);
  uint64_t id = 0, result = 0;
  REQUIRE(store.Reserve("alice", "secret", kArray, 10, 10, 0, &id).ok());
  REQUIRE(store.Reserve("alice", "ticket", kResult, 10, 10, 0, &result).ok());
  const DataStore::Entry *e = nullptr;
  // A wrong token looks like an unknown id; the right token under another
  // key is refused as such.
  CHECK(store.Find(id, "secreT", "alice", kArray, 1, &e).code() == NINF_ERR_INVALID_ID);
  CHECK(store.Find(id, "secret", "mallory", kArray, 1, &e).code() == NINF_ERR_AUTH);
  CHECK(store.Find(id, "secret", "", kArray, 1, &e).code() == NINF_ERR_AUTH);
  CHECK(store.Find(id + 2, "secret", "alice", kArray, 1, &e).code() == NINF_ERR_INVALID_ID);
  CHECK(store.Find(id, "secret", "alice", kArray, 1, &e).ok());
  // A two-phase result is no kept array, nor the reverse: unknown, even to
  // its owner with its token.
  CHECK(store.Find(result, "ticket", "alice", kArray, 1, &e).code() == NINF_ERR_INVALID_ID);
  CHECK(store.Find(id, "secret", "alice", kResult, 1, &e).code() == NINF_ERR_INVALID_ID);
  CHECK(store.Find(result, "ticket", "alice", kResult, 1, &e).ok());
  CHECK(store.Reserve("alice", "", kArray, 10, 10, 0, &id).code() == NINF_ERR_INVALID_ARGUMENT);
  CHECK(store.Reserve("alice", "t", kArray, 10, 0, 0, &id).code() == NINF_ERR_INVALID_ARGUMENT);
  REQUIRE(store.Get(id) != nullptr);
  CHECK(store.Get(id)->state == DataStore::State::kPending);
  CHECK(store.Get(id + 5) == nullptr);
}

TEST_CASE("store_expiry_and_owner_release", "[store]") {
  DataStore store(1000);
  uint64_t a = 0, b = 0, c = 0;
  REQUIRE(store.Reserve("alice", "ta", kArray, 10, 5, 0, &a).ok());
  REQUIRE(store.Reserve("alice", "tb", kArray, 10, 50, 0, &b).ok());
  REQUIRE(store.Reserve("bob", "tc", kArray, 10, 50, 0, &c).ok());
  const DataStore::Entry *e = nullptr;
  // Found after its time: expired, and freed (and still said to be expired).
  CHECK(store.Find(a, "ta", "alice", kArray, 5.0, &e).code() == NINF_ERR_EXPIRED);
  CHECK(store.Find(a, "ta", "alice", kArray, 5.0, &e).code() == NINF_ERR_EXPIRED);
  CHECK(store.Get(a) == nullptr);
  CHECK(store.counts().expired == 1);
  // The client went away: its entries go, others stay.
  CHECK(store.ReleaseOwner("alice") == 1);
  CHECK(store.Find(c, "tc", "bob", kArray, 6, &e).ok());
  CHECK(store.Expire(49.9) == 0);
  CHECK(store.Expire(50) == 1);
  CHECK(store.counts().entries == 0);
  CHECK(store.counts().stored == 3);
  // A fill larger than reserved is refused and the entry freed.
  REQUIRE(store.Reserve("bob", "td", kArray, 10, 50, 60, &c).ok());
  CHECK(store.Fill(c, SomeFd(), 11).code() == NINF_ERR_TOO_LARGE);
  CHECK(store.counts().bytes == 0);
}

TEST_CASE("store_owner_caps_bound_one_key_and_not_the_others", "[store]") {
  DataStore store(1000);
  store.set_owner_caps({.entries = 3, .bytes = 100});
  uint64_t id = 0;
  for (int i = 0; i < 3; ++i)
    REQUIRE(store.Reserve("alice", "t" + std::to_string(i), kResult, 10, 60, 0, &id).ok());
  Status st = store.Reserve("alice", "t3", kResult, 10, 60, 0, &id);
  CHECK(st.code() == NINF_ERR_LIMIT);
  CHECK(st.message().find("store_entries_per_owner") != std::string::npos);
  // Another owner is not held back by alice's entries.
  REQUIRE(store.Reserve("bob", "b0", kResult, 90, 60, 0, &id).ok());
  st = store.Reserve("bob", "b1", kResult, 11, 60, 0, &id);
  CHECK(st.code() == NINF_ERR_LIMIT);
  CHECK(st.message().find("store_bytes_per_owner") != std::string::npos);
  CHECK(store.counts().refused == 2);
  // Freed room is the owner's again, including what a fill did not need.
  REQUIRE(store.Reserve("bob", "b1", kResult, 10, 60, 0, &id).ok());
  REQUIRE(store.Fill(id, std::string(4, 'x')).ok());
  REQUIRE(store.Reserve("bob", "b2", kResult, 6, 60, 0, &id).ok());
  CHECK(store.ReleaseOwner("alice") == 3);
  REQUIRE(store.Reserve("alice", "t4", kResult, 10, 60, 0, &id).ok());
  // A cap of 0 is no cap of its own.
  store.set_owner_caps({});
  for (int i = 0; i < 10; ++i)
    REQUIRE(store.Reserve("carol", "c" + std::to_string(i), kArray, 1, 60, 0, &id).ok());
}

TEST_CASE("store_descriptors_are_capped_and_memory_entries_cost_none", "[store]") {
  DataStore store(1000, 2);
  uint64_t a = 0, b = 0, c = 0, d = 0;
  REQUIRE(store.Reserve("x", "ta", kResult, 10, 60, 0, &a).ok());
  REQUIRE(store.Reserve("x", "tb", kResult, 10, 60, 0, &b).ok());
  REQUIRE(store.Reserve("x", "tc", kResult, 10, 60, 0, &c).ok());
  REQUIRE(store.Reserve("x", "td", kResult, 10, 60, 0, &d).ok());
  REQUIRE(store.Fill(a, SomeFd(), 10).ok());
  REQUIRE(store.Fill(b, SomeFd(), 10).ok());
  CHECK_FALSE(store.HasDescriptorRoom());
  CHECK(store.Fill(c, SomeFd(), 10).code() == NINF_ERR_LIMIT);  // stays pending
  CHECK(store.Get(c)->state == DataStore::State::kPending);
  REQUIRE(store.Fill(c, std::string("0123456789")).ok());
  REQUIRE(store.Fill(d, std::string("01234")).ok());
  CHECK(store.counts().descriptors == 2);
  CHECK(store.counts().bytes == 35);
  const DataStore::Entry *e = nullptr;
  REQUIRE(store.Find(c, "tc", "x", kResult, 1, &e).ok());
  CHECK(e->memory == "0123456789");
  CHECK(e->file.get() < 0);
  CHECK(store.Release(a));
  CHECK(store.HasDescriptorRoom());
  CHECK(store.counts().descriptors == 1);
}
