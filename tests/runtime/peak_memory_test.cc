// Each call's resident peak (stubs/runtime/peak_memory.h): the status line
// parsed, and the mark that Reset sets back and memory touched raises.
#include "stubs/runtime/peak_memory.h"

#include <sys/mman.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>

using ninf::stub::ParseVmHwmKb;
using ninf::stub::PeakMemory;

TEST_CASE("the_vmhwm_line_is_parsed", "[unit]") {
  CHECK(ParseVmHwmKb("Name:\tx\nVmPeak:\t  9000 kB\nVmHWM:\t    1234 kB\nVmRSS:\t 99 kB\n") ==
        1234);
  CHECK(ParseVmHwmKb("Name:\tx\nVmRSS:\t 99 kB\n") == 0);  // a kernel thread has none
  CHECK(ParseVmHwmKb("") == 0);
}

TEST_CASE("the_peak_follows_touched_memory_and_resets", "[unit]") {
  PeakMemory peak;
  peak.Reset();
  const uint64_t before = peak.PeakBytes();
  REQUIRE(before > 0);
  // Mapped and unmapped here, not through malloc: a sanitizer's allocator
  // would keep the freed memory resident.
  constexpr std::size_t kBytes = 64u << 20;
  void *p = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  std::memset(p, 1, kBytes);  // every page written
  CHECK(peak.PeakBytes() >= before + kBytes - (4u << 20));
  REQUIRE(::munmap(p, kBytes) == 0);
  // Unmapped: the mark stays until the next Reset, which brings it back to
  // what the process holds now.
  CHECK(peak.PeakBytes() >= before + kBytes - (4u << 20));
  peak.Reset();
  CHECK(peak.PeakBytes() < before + (16u << 20));
}
