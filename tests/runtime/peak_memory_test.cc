// Each call's resident peak (stubs/runtime/peak_memory.h): the status line
// parsed, and the mark that Reset sets back and memory touched raises.
#include "stubs/runtime/peak_memory.h"

#include <sys/mman.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>

using ninf::stub::ParseStatusKb;
using ninf::stub::PeakMemory;

TEST_CASE("status_lines_are_parsed", "[unit]") {
  const char *status =
      "Name:\tx\nVmPeak:\t  9000 kB\nVmHWM:\t    1234 kB\nVmRSS:\t 99 kB\n"
      "HugetlbPages:\t    4096 kB\n";
  CHECK(ParseStatusKb(status, "VmHWM:") == 1234);
  CHECK(ParseStatusKb(status, "HugetlbPages:") == 4096);
  CHECK(ParseStatusKb(status, "Name:") == 0);                         // not a number
  CHECK(ParseStatusKb("Name:\tx\nVmRSS:\t 99 kB\n", "VmHWM:") == 0);  // a kernel thread's
  CHECK(ParseStatusKb("", "VmHWM:") == 0);
  CHECK(ParseStatusKb("VmHWM:\t 7 kB\n", "VmHWM:") == 7);  // the first line too
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
