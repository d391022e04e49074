#include "stubs/runtime/peak_memory.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace ninf::stub {

PeakMemory::PeakMemory()
    : clear_refs_(::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC)),
      status_(::open("/proc/self/status", O_RDONLY | O_CLOEXEC)) {}

PeakMemory::~PeakMemory() {
  if (clear_refs_ >= 0) ::close(clear_refs_);
  if (status_ >= 0) ::close(status_);
}

void PeakMemory::Reset() {
  if (clear_refs_ >= 0) (void)!::write(clear_refs_, "5", 1);
}

uint64_t PeakMemory::PeakBytes() const {
  if (status_ < 0) return 0;
  char text[4096];  // the whole status text is about 1.5 KiB
  const ssize_t n = ::pread(status_, text, sizeof text - 1, 0);
  if (n <= 0) return 0;
  text[n] = '\0';
  return (ParseStatusKb(text, "VmHWM:") + ParseStatusKb(text, "HugetlbPages:")) * 1024;
}

uint64_t ParseStatusKb(const char *status_text, const char *field) {
  const std::size_t length = std::strlen(field);
  for (const char *line = status_text; line && *line; line = std::strchr(line, '\n')) {
    if (*line == '\n') ++line;
    if (std::strncmp(line, field, length) != 0) continue;
    const long long kb = std::strtoll(line + length, nullptr, 10);
    return kb > 0 ? static_cast<uint64_t>(kb) : 0;
  }
  return 0;
}

}  // namespace ninf::stub
