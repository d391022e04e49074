// The slot lease page (protocol/slot_lease.h): every move of the lease word
// from both sides, and the pages ninfd refuses to map.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>

#include "protocol/slot_lease.h"

using ninf::LeasePhase;
using ninf::SlotLease;

namespace {

// The executable's page and ninfd's mapping of the same memory.
struct LeasePages {
  SlotLease executable, ninfd;
  LeasePages() {
    REQUIRE(SlotLease::Create(&executable).ok());
    REQUIRE(SlotLease::Map(::dup(executable.fd()), &ninfd).ok());
  }
};

}  // namespace

TEST_CASE("slot_lease_a_granted_slot_is_begun_kept_and_begun_again", "[slot_lease]") {
  LeasePages p;
  CHECK_FALSE(p.executable.Begin());  // nothing granted yet: the call asks
  REQUIRE(p.ninfd.Grant());
  CHECK_FALSE(p.ninfd.Grant());  // only from none
  CHECK_FALSE(p.ninfd.InCall());
  REQUIRE(p.executable.Begin());
  CHECK(p.ninfd.InCall());
  CHECK(p.ninfd.Phase() == ninf::kLeasePhaseReceiving);
  CHECK(p.ninfd.CallStartedNs() > 0);
  p.executable.SetPhase(ninf::kLeasePhaseComputing);
  CHECK(p.ninfd.Phase() == ninf::kLeasePhaseComputing);
  CHECK(p.executable.End());  // kept
  CHECK(p.ninfd.StillLeased());
  CHECK_FALSE(p.ninfd.InCall());
  REQUIRE(p.executable.Begin());
  CHECK(p.ninfd.LeasedCalls() == 2);
}

TEST_CASE("slot_lease_taken_back_when_idle_frees_at_once", "[slot_lease]") {
  LeasePages p;
  REQUIRE(p.ninfd.Grant());
  CHECK(p.ninfd.TakeBack() == SlotLease::Taken::kNow);
  CHECK_FALSE(p.executable.Begin());  // the next call asks
  CHECK(p.ninfd.TakeBack() == SlotLease::Taken::kNotLeased);
}

TEST_CASE("slot_lease_taken_back_in_a_call_frees_at_its_end", "[slot_lease]") {
  LeasePages p;
  REQUIRE(p.ninfd.Grant());
  REQUIRE(p.executable.Begin());
  CHECK(p.ninfd.TakeBack() == SlotLease::Taken::kAfterCall);
  CHECK(p.executable.RevokeAsked());
  CHECK(p.ninfd.TakeBack() == SlotLease::Taken::kAfterCall);  // asked again: the same
  CHECK_FALSE(p.executable.End());                            // given back
  CHECK_FALSE(p.ninfd.StillLeased());
  CHECK_FALSE(p.executable.Begin());
}

TEST_CASE("slot_lease_ninfd_maps_only_a_sealed_memfd_page", "[slot_lease]") {
  SlotLease lease;
  // A regular file: no seals, so it could be truncated under ninfd.
  char path[] = "/tmp/ninf-lease-XXXXXX";
  const int file = ::mkstemp(path);
  REQUIRE(file >= 0);
  ::unlink(path);
  REQUIRE(::ftruncate(file, 4096) == 0);
  CHECK_FALSE(SlotLease::Map(file, &lease).ok());
  // A memfd that is not sealed against shrinking.
  const int open = ::memfd_create("open", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  REQUIRE(open >= 0);
  REQUIRE(::ftruncate(open, 4096) == 0);
  CHECK_FALSE(SlotLease::Map(open, &lease).ok());
  // Sealed but too small.
  const int small = ::memfd_create("small", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  REQUIRE(small >= 0);
  REQUIRE(::ftruncate(small, 64) == 0);
  REQUIRE(::fcntl(small, F_ADD_SEALS, F_SEAL_SHRINK) == 0);
  CHECK_FALSE(SlotLease::Map(small, &lease).ok());
  CHECK_FALSE(lease.valid());
}

TEST_CASE("slot_lease_a_word_ninfd_does_not_know_ends_the_lease", "[slot_lease]") {
  LeasePages p;
  REQUIRE(p.ninfd.Grant());
  REQUIRE(p.executable.Begin());
  // The executable's memory is its own: it may write anything there.
  auto *word = static_cast<uint32_t *>(
      ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, p.executable.fd(), 0));
  REQUIRE(word != MAP_FAILED);
  *word = 77;
  CHECK_FALSE(p.ninfd.StillLeased());
  CHECK(p.ninfd.TakeBack() == SlotLease::Taken::kNotLeased);
  *word = 99;
  CHECK(p.ninfd.TakeBack() == SlotLease::Taken::kNow);
  CHECK_FALSE(p.ninfd.InCall());
  ::munmap(word, 4096);
}
