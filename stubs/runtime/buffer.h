// Array buffers of the executable: 64-byte aligned, and for large arrays
// page-aligned memory with transparent huge pages requested, because the
// first touch of fresh 4 KiB pages (~2.6 GB/s here) is slower than the
// loopback link; huge pages fault in at ~17 GB/s.
//
// What a buffer holds is never memory of anything else: every byte of its
// capacity is zero when allocated, and afterwards holds only what was
// written into this buffer by the calls made on it (one client connection's
// calls: an executable that served another client would have to Release
// its buffers first).
#pragma once

#include <cstddef>

namespace ninf::stub {

class Buffer {
 public:
  Buffer() = default;
  ~Buffer();
  Buffer(Buffer &&other) noexcept;
  Buffer &operator=(Buffer &&other) noexcept;
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;

  // Allocates `bytes` (at least 1, so every pointer handed to the routine is
  // valid), all zero. Returns false when memory is exhausted.
  bool Allocate(std::size_t bytes);

  // Makes the buffer hold `bytes`, keeping the memory it has when that is
  // large enough: the calls of a function handle reuse warm pages instead of
  // faulting in fresh ones every time. Memory far larger than needed (over
  // 4x and over 64 MiB) is given back.
  bool Reserve(std::size_t bytes);

  void *data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void Release();

  void *data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  std::size_t mapped_ = 0;  // > 0 when the memory came from mmap
};

}  // namespace ninf::stub
