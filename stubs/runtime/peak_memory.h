// An executable's resident high-water mark, per call: Linux keeps one per
// process (VmHWM in /proc/self/status), and writing "5" to
// /proc/self/clear_refs sets it back to the current resident size. Reset
// before a call's frame is read and read after its reply is sent, it is the
// call's peak: what the process held before (code, libraries, buffers kept
// for later calls) plus what the call added. Huge pages are not resident
// memory to Linux (a shared segment of them, protocol/shared_memory.h):
// those mapped when the call ends (HugetlbPages) are added. Both files stay open, so a
// call pays two small system calls, off the client's path (the executable
// is waiting for the client, or has already answered it).
//
// Not getrusage's ru_maxrss: posix_spawn's child runs on ninfd's memory
// until it executes, and exec folds ninfd's high-water mark into the
// child's.
#pragma once

#include <cstdint>

namespace ninf::stub {

class PeakMemory {
 public:
  PeakMemory();
  ~PeakMemory();
  PeakMemory(const PeakMemory &) = delete;
  PeakMemory &operator=(const PeakMemory &) = delete;

  // From now on the peak is measured afresh (no-op where the kernel cannot).
  void Reset();
  // The resident high-water mark since the last Reset, in bytes; 0 when it
  // cannot be read.
  uint64_t PeakBytes() const;

 private:
  int clear_refs_ = -1;
  int status_ = -1;
};

// The kB of the line that starts with `field` (e.g. "VmHWM:") in a
// /proc/PID/status text; 0 without one.
uint64_t ParseStatusKb(const char *status_text, const char *field);

}  // namespace ninf::stub
