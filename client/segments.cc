#include "client/segments.h"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

namespace ninf::client {
namespace {

constexpr std::size_t kKeepAtMost = 4;
// Sizes are rounded up so that calls of slightly different sizes share one.
constexpr uint64_t kGranule = 1 << 20;

std::mutex g_segments_mutex;
std::vector<SharedSegment> g_free;  // sorted by size, smallest first

}  // namespace

Status SegmentLease::Acquire(uint64_t bytes, SegmentLease *out) {
  {
    std::lock_guard<std::mutex> lock(g_segments_mutex);
    auto it = std::find_if(g_free.begin(), g_free.end(),
                           [bytes](const SharedSegment &s) { return s.size() >= bytes; });
    if (it != g_free.end()) {
      out->segment_ = std::move(*it);
      g_free.erase(it);
      return Status::Ok();
    }
  }
  const uint64_t size = (bytes + kGranule - 1) / kGranule * kGranule;
  return SharedSegment::Create(size, &out->segment_);
}

SegmentLease::~SegmentLease() {
  if (!segment_.valid() || !keep_) return;
  std::lock_guard<std::mutex> lock(g_segments_mutex);
  auto pos =
      std::lower_bound(g_free.begin(), g_free.end(), segment_.size(),
                       [](const SharedSegment &s, uint64_t size) { return s.size() < size; });
  g_free.insert(pos, std::move(segment_));
  if (g_free.size() > kKeepAtMost) g_free.erase(g_free.begin());
}

}  // namespace ninf::client
