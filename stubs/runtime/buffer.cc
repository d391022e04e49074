#include "stubs/runtime/buffer.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace ninf::stub {
namespace {

constexpr std::size_t kAlignment = 64;
constexpr std::size_t kHugePage = 2u << 20;
// Below this, malloc'd memory is usually warm already and mmap costs more.
constexpr std::size_t kMmapThreshold = 1u << 20;

}  // namespace

Buffer::~Buffer() { Release(); }

Buffer::Buffer(Buffer &&other) noexcept { *this = std::move(other); }

Buffer &Buffer::operator=(Buffer &&other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
    foreign_from_ = std::exchange(other.foreign_from_, 0);
    foreign_to_ = std::exchange(other.foreign_to_, 0);
  }
  return *this;
}

void Buffer::Release() {
  if (!data_) return;
  if (mapped_)
    ::munmap(data_, mapped_);
  else
    std::free(data_);
  data_ = nullptr;
  size_ = capacity_ = mapped_ = foreign_from_ = foreign_to_ = 0;
}

void Buffer::Disown() {
  constexpr std::size_t kKeepAtMost = 64u << 20;
  if (capacity_ > kKeepAtMost) {
    Release();
    return;
  }
  foreign_from_ = 0;
  foreign_to_ = capacity_;
}

void Buffer::ClearUpTo(std::size_t bytes) {
  const std::size_t end = std::min(bytes, foreign_to_);
  if (end > foreign_from_)
    std::memset(static_cast<char *>(data_) + foreign_from_, 0, end - foreign_from_);
  Overwritten(bytes);
}

void Buffer::Overwritten(std::size_t bytes) { foreign_from_ = std::max(foreign_from_, bytes); }

bool Buffer::Reserve(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  constexpr std::size_t kShrinkAbove = 64u << 20;
  bool fits = data_ && bytes <= capacity_;
  bool wasteful = capacity_ > kShrinkAbove && capacity_ / 4 > bytes;
  if (fits && !wasteful) {
    size_ = bytes;
    return true;
  }
  return Allocate(bytes);
}

bool Buffer::Allocate(std::size_t bytes) {
  Release();
  if (bytes == 0) bytes = 1;
  if (bytes >= kMmapThreshold) {
    std::size_t len = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    ::madvise(p, len, MADV_HUGEPAGE);  // advice only: fine if THP is off
    data_ = p;
    mapped_ = capacity_ = len;
  } else {
    void *p = nullptr;
    std::size_t len = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    if (::posix_memalign(&p, kAlignment, len) != 0) return false;
    // malloc recycles memory this process freed (earlier arrays, protobuf
    // buffers): clear all of it, the rounding tail included, so that a later
    // Reserve within the capacity cannot expose it either. Fresh mmap'd
    // memory above is zero already.
    std::memset(p, 0, len);
    data_ = p;
    capacity_ = len;
  }
  size_ = bytes;
  return true;
}

}  // namespace ninf::stub
