// The executable's array buffers (stubs/runtime/buffer.h) never hand the
// routine, and so never send the client, memory that came from anything but
// this buffer: what a routine leaves unwritten of an OUT array must not be
// another array's bytes or anything else the process freed.
#include "stubs/runtime/buffer.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <vector>

using ninf::stub::Buffer;

namespace {

constexpr unsigned char kSecret = 0xA5;

bool AllZero(const void *p, std::size_t n) {
  const auto *b = static_cast<const unsigned char *>(p);
  for (std::size_t i = 0; i < n; ++i)
    if (b[i] != 0) return false;
  return true;
}

// Leaves `n` bytes of kSecret in freed heap memory, where malloc will find
// them for the next request of about that size.
void FreeSecret(std::size_t n) {
  void *p = nullptr;
  REQUIRE(posix_memalign(&p, 64, n) == 0);
  std::memset(p, kSecret, n);
  std::free(p);
}

}  // namespace

TEST_CASE("buffer_fresh_small_memory_is_zero", "[runtime]") {
  for (std::size_t n : {64u, 1000u, 4096u, 65536u, 900000u}) {
    FreeSecret(n);
    Buffer b;
    REQUIRE(b.Allocate(n));
    CHECK(AllZero(b.data(), n));
  }
}

// The bug this guards against: a buffer that grows on a later call of a
// function handle gets recycled heap memory and was not cleared.
TEST_CASE("buffer_growing_on_reuse_is_zero", "[runtime]") {
  Buffer b;
  REQUIRE(b.Reserve(128));
  std::memset(b.data(), 1, 128);  // the first call's result
  FreeSecret(8192);
  REQUIRE(b.Reserve(8192));  // larger: reallocated
  CHECK(AllZero(b.data(), 8192));
}

TEST_CASE("buffer_reuse_within_capacity_shows_only_its_own_bytes", "[runtime]") {
  Buffer b;
  REQUIRE(b.Reserve(100));  // capacity rounds up to 128
  std::memset(b.data(), 7, 100);
  REQUIRE(b.Reserve(128));  // the rounding tail was never written by a call
  const auto *p = static_cast<const unsigned char *>(b.data());
  for (int i = 0; i < 100; ++i) REQUIRE(p[i] == 7);  // this buffer's own earlier bytes
  CHECK(AllZero(p + 100, 28));
}

TEST_CASE("buffer_large_memory_is_zero", "[runtime]") {
  Buffer b;
  REQUIRE(b.Allocate(3u << 20));  // mmap'd
  CHECK(AllZero(b.data(), 3u << 20));
}
