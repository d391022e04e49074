// ninfd's store of kept data (server/data_store.h) on its own: the cap,
// tokens and owners, expiry, and what the counts say.
#include "server/data_store.h"

#include <unistd.h>

#include <catch2/catch.hpp>

using ninf::daemon::UniqueFd;
using ninf::server::DataStore;

namespace {

// A descriptor to stand for stored bytes.
UniqueFd SomeFd() { return UniqueFd(::dup(0)); }

}  // namespace

TEST_CASE("store_reserve_fill_find_release", "[store]") {
  DataStore store(1000);
  uint64_t id = 0;
  REQUIRE(store.Reserve("alice", "t0k3n", 600, 10, 0, &id).ok());
  CHECK(store.counts().bytes == 600);
  const DataStore::Entry *e = nullptr;
  REQUIRE(store.Find(id, "t0k3n", "alice", 1, &e).ok());
  CHECK(e->state == DataStore::State::kPending);
  REQUIRE(store.Fill(id, SomeFd(), 400).ok());
  CHECK(store.counts().bytes == 400);  // the room not used goes back
  REQUIRE(store.Find(id, "t0k3n", "alice", 2, &e).ok());
  CHECK(e->state == DataStore::State::kReady);
  CHECK(e->data.get() >= 0);
  CHECK(store.Fill(id, SomeFd(), 10).code() == NINF_ERR_INVALID_ID);  // filled once
  CHECK(store.Release(id));
  CHECK_FALSE(store.Release(id));
  CHECK(store.Find(id, "t0k3n", "alice", 3, &e).code() == NINF_ERR_INVALID_ID);
  CHECK(store.counts().entries == 0);
  CHECK(store.counts().bytes == 0);
  CHECK(store.counts().released == 1);
}

TEST_CASE("store_cap_refuses_and_frees_room", "[store]") {
  DataStore store(1000);
  uint64_t a = 0, b = 0, c = 0;
  REQUIRE(store.Reserve("x", "ta", 700, 10, 0, &a).ok());
  CHECK(store.Reserve("x", "tb", 400, 10, 0, &b).code() == NINF_ERR_LIMIT);
  CHECK(store.counts().refused == 1);
  REQUIRE(store.Reserve("x", "tb", 300, 10, 0, &b).ok());  // exactly the cap
  CHECK(store.Reserve("y", "tc", 1, 10, 0, &c).code() == NINF_ERR_LIMIT);
  // Expired entries make room at the next reservation.
  REQUIRE(store.Reserve("y", "tc", 700, 10, 10.5, &c).ok());
  CHECK(store.counts().expired == 2);
  CHECK(store.counts().bytes == 700);
  // Freed by expiry, an entry is still "expired" to its token's holder,
  // and unknown to anyone else.
  const DataStore::Entry *e = nullptr;
  CHECK(store.Find(a, "ta", "x", 11, &e).code() == NINF_ERR_EXPIRED);
  CHECK(store.Find(a, "tz", "x", 11, &e).code() == NINF_ERR_INVALID_ID);
  CHECK(store.FindByToken(b, "tb", 11, &e).code() == NINF_ERR_EXPIRED);
  // A cap of 0 keeps nothing; sizes near 2^64 do not wrap.
  DataStore none(0);
  CHECK(none.Reserve("x", "t", 1, 10, 0, &a).code() == NINF_ERR_LIMIT);
  CHECK(store.Reserve("x", "t", ~0ull, 10, 11, &a).code() == NINF_ERR_LIMIT);
}

TEST_CASE("store_token_and_owner_guard_entries", "[store]") {
  DataStore store(1000);
  uint64_t id = 0;
  REQUIRE(store.Reserve("alice", "secret", 10, 10, 0, &id).ok());
  const DataStore::Entry *e = nullptr;
  // A wrong token looks like an unknown id; the right token under another
  // key is refused as such.
  CHECK(store.Find(id, "secreT", "alice", 1, &e).code() == NINF_ERR_INVALID_ID);
  CHECK(store.Find(id, "secret", "mallory", 1, &e).code() == NINF_ERR_AUTH);
  CHECK(store.Find(id + 1, "secret", "alice", 1, &e).code() == NINF_ERR_INVALID_ID);
  CHECK(store.Find(id, "secret", "alice", 1, &e).ok());
  CHECK(store.Reserve("alice", "", 10, 10, 0, &id).code() == NINF_ERR_INVALID_ARGUMENT);
  CHECK(store.Reserve("alice", "t", 10, 0, 0, &id).code() == NINF_ERR_INVALID_ARGUMENT);
}

TEST_CASE("store_expiry_and_owner_release", "[store]") {
  DataStore store(1000);
  uint64_t a = 0, b = 0, c = 0;
  REQUIRE(store.Reserve("alice", "ta", 10, 5, 0, &a).ok());
  REQUIRE(store.Reserve("alice", "tb", 10, 50, 0, &b).ok());
  REQUIRE(store.Reserve("bob", "tc", 10, 50, 0, &c).ok());
  const DataStore::Entry *e = nullptr;
  // Found after its time: expired, and freed (and still said to be expired).
  CHECK(store.Find(a, "ta", "alice", 5.0, &e).code() == NINF_ERR_EXPIRED);
  CHECK(store.Find(a, "ta", "alice", 5.0, &e).code() == NINF_ERR_EXPIRED);
  CHECK(store.Get(a) == nullptr);
  CHECK(store.counts().expired == 1);
  // The client went away: its entries go, others stay.
  CHECK(store.ReleaseOwner("alice") == 1);
  CHECK(store.Find(c, "tc", "bob", 6, &e).ok());
  CHECK(store.Expire(49.9) == 0);
  CHECK(store.Expire(50) == 1);
  CHECK(store.counts().entries == 0);
  CHECK(store.counts().stored == 3);
  // A fill larger than reserved is refused and the entry freed.
  REQUIRE(store.Reserve("bob", "td", 10, 50, 60, &c).ok());
  CHECK(store.Fill(c, SomeFd(), 11).code() == NINF_ERR_TOO_LARGE);
  CHECK(store.counts().bytes == 0);
}

TEST_CASE("store_fetch_by_token_ignores_the_owner", "[store]") {
  // A block's array is read by another server's executable, which proves
  // itself with the token alone; a client's COLLECT also needs the owner.
  DataStore store(1000);
  uint64_t a = 0;
  REQUIRE(store.Reserve("alice", "ta", 10, 60, 0, &a).ok());
  const DataStore::Entry *e = nullptr;
  CHECK(store.FindByToken(a, "ta", 1, &e).ok());
  CHECK(store.FindByToken(a, "tb", 1, &e).code() == NINF_ERR_INVALID_ID);
  CHECK(store.Find(a, "ta", "bob", 1, &e).code() == NINF_ERR_AUTH);
  REQUIRE(store.Get(a) != nullptr);
  CHECK(store.Get(a)->state == DataStore::State::kPending);
  CHECK(store.Get(a + 1) == nullptr);
}
