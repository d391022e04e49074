// The client's shared segments for the same-host path (shared_memory.h):
// creating, sizing and first touching a segment costs more than copying
// into a warm one, so segments are kept for later calls. A call leases one
// at least as large as it needs; returned, it waits for the next call. At
// most a few are kept (process-wide, for every thread and asynchronous
// call), the smallest dropped first. Thread-safe.
#pragma once

#include <cstdint>

#include "protocol/shared_memory.h"
#include "protocol/status.h"

namespace ninf::client {

class SegmentLease {
 public:
  // A segment of at least `bytes`, kept or new. Errors: NINF_ERR_NO_MEMORY.
  static Status Acquire(uint64_t bytes, SegmentLease *out);

  SegmentLease() = default;
  ~SegmentLease();  // gives the segment back if Keep() was called
  SegmentLease(SegmentLease &&) = default;
  SegmentLease &operator=(SegmentLease &&) = default;

  SharedSegment &segment() { return segment_; }

  // The call succeeded: the segment may serve later calls. A failed or
  // cancelled call's segment is dropped instead, since an executable being
  // killed might still write into it.
  void Keep() { keep_ = true; }

 private:
  SharedSegment segment_;
  bool keep_ = false;
};

}  // namespace ninf::client
