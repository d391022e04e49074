// The same-host path's shared memory. On a Unix-domain connection a client
// may put a call's arrays into a memfd segment instead of the socket: it
// copies its IN and INOUT arrays in (the one copy), passes the segment's
// descriptor with the ARGS frame (SCM_RIGHTS), and the executable maps the
// segment and hands the routine pointers into it, so the arrays are never
// copied on the server side; results are written in place and the client
// copies its OUT and INOUT arrays back out. The segment holds nothing but
// the call's arrays (a client exposes only them), and the executable unmaps
// it when the connection ends.
//
//   segment:  | array p0 | pad | array p2 | pad | ... |   (64-byte aligned,
//             IN, OUT and INOUT arrays in parameter order; no WORK arrays)
//
// The client seals the segment against shrinking (F_SEAL_SHRINK) and the
// executable refuses one that is not sealed or is smaller than the call
// needs: a client cannot make the executable fault by truncating it
// mid-call.
#pragma once

#include <cstdint>
#include <vector>

#include "ninf.pb.h"
#include "protocol/layout.h"
#include "protocol/protocol_export.h"
#include "protocol/status.h"

namespace ninf {

// Where each array of a call lies in its segment.
struct SharedPlacement {
  std::vector<uint64_t> offsets;  // per parameter; meaningful for IN, OUT, INOUT arrays
  uint64_t bytes = 0;             // the segment size the call needs
};

NINF_PROTOCOL_API SharedPlacement PlaceShared(const wire::FunctionInterface &iface,
                                              const CallLayout &layout);

// Whether parameter `p` has a place in the segment (an array that is sent
// or returned).
NINF_PROTOCOL_API bool InSharedSegment(const wire::Param &p);

// Segments at least this large are made of huge pages when there are any
// (a smaller one would waste most of its last 2 MiB page).
inline constexpr uint64_t kHugeSegmentMin = 4ull << 20;

class NINF_PROTOCOL_API SharedSegment {
 public:
  SharedSegment() = default;
  ~SharedSegment();
  SharedSegment(SharedSegment &&other) noexcept;
  SharedSegment &operator=(SharedSegment &&other) noexcept;
  SharedSegment(const SharedSegment &) = delete;
  SharedSegment &operator=(const SharedSegment &) = delete;

  // The client's side: a new segment of `bytes`, mapped, sealed against
  // shrinking; of huge pages (size() rounded up to whole ones) when it is at
  // least kHugeSegmentMin and the system has huge pages to spare
  // (vm.nr_hugepages; docs/protocol.md, "The same-host path"); else, as
  // large, of transparent huge pages where the kernel gives shared memory
  // any (shmem_enabled "advise": MADV_HUGEPAGE). Errors: NINF_ERR_NO_MEMORY.
  static Status Create(uint64_t bytes, SharedSegment *out);

  // The executable's side: maps the first `bytes` of the segment `fd` (owned
  // from here on), which must be a sealed memfd at least that large. Only
  // what the call needs is mapped (the call's size is bounded by
  // max_call_bytes; the segment's own size is the client's word). Errors:
  // NINF_ERR_PROTOCOL (not sealed, too small), NINF_ERR_NO_MEMORY.
  static Status Map(int fd, uint64_t bytes, SharedSegment *out);

  // Whether `fd` is the segment this object maps (the same memfd, passed
  // again with a later call).
  bool Same(int fd) const;

  bool valid() const { return data_ != nullptr; }
  char *data() const { return static_cast<char *>(data_); }
  uint64_t size() const { return size_; }
  int fd() const { return fd_; }

 private:
  void Reset();
  // Create's huge-page attempt: false, with nothing held, when it fails.
  static bool CreateHuge(uint64_t bytes, SharedSegment *out);
  // Takes `fd` and its mapping `data` of `size` bytes.
  static void Adopt(int fd, void *data, uint64_t size, SharedSegment *out);

  void *data_ = nullptr;
  uint64_t size_ = 0;
  int fd_ = -1;
  uint64_t device_ = 0, inode_ = 0;
};

}  // namespace ninf
