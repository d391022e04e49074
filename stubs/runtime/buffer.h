// Array buffers of the executable: 64-byte aligned, and for large arrays
// page-aligned memory with transparent huge pages requested, because the
// first touch of fresh 4 KiB pages (~2.6 GB/s here) is slower than the
// loopback link; huge pages fault in at ~17 GB/s.
//
// What a buffer holds is never memory of anything else: every byte of its
// capacity is zero when allocated, and afterwards holds only what was
// written into this buffer by the calls made on it. A reused executable
// serves one client after another: Disown() marks everything in the buffer
// as the previous client's, and nothing of it reaches the routine of the
// next one, because each call either receives the bytes it uses
// (Overwritten: IN and INOUT arrays, no cost) or has them zeroed first
// (ClearUpTo: OUT and WORK arrays, only the bytes that call uses and only
// once per client).
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

  // A new client: what the buffer holds is the previous one's from now on.
  // Memory over 64 MiB is given back instead (an idle executable should not
  // hold a big call's arrays).
  void Disown();

  // The routine will see the first `bytes` without a new client's data in
  // them: zeroes what of them is still a previous client's.
  void ClearUpTo(std::size_t bytes);

  // The first `bytes` were just received from the current client.
  void Overwritten(std::size_t bytes);

  // Bytes that still hold a previous client's data (for tests).
  std::size_t foreign_bytes() const {
    return foreign_to_ > foreign_from_ ? foreign_to_ - foreign_from_ : 0;
  }

  void *data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void Release();

  void *data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  std::size_t mapped_ = 0;  // > 0 when the memory came from mmap
  // [foreign_from_, foreign_to_) may hold a previous client's bytes; what
  // lies before it is the current client's or zero, what lies after it zero.
  std::size_t foreign_from_ = 0;
  std::size_t foreign_to_ = 0;
};

}  // namespace ninf::stub
