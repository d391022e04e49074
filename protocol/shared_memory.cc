#include "protocol/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace ninf {
namespace {

constexpr uint64_t kAlignment = 64;

Status NoMemory(const char *what, uint64_t bytes) {
  return Status(NINF_ERR_NO_MEMORY, std::string(what) + " a shared segment of " +
                                        std::to_string(bytes) + " bytes: " + std::strerror(errno));
}

}  // namespace

bool InSharedSegment(const wire::Param &p) { return IsArray(p) && p.mode() != wire::MODE_WORK; }

SharedPlacement PlaceShared(const wire::FunctionInterface &iface, const CallLayout &layout) {
  SharedPlacement out;
  out.offsets.assign(static_cast<std::size_t>(iface.params_size()), 0);
  for (int i = 0; i < iface.params_size(); ++i) {
    if (!InSharedSegment(iface.params(i))) continue;
    out.offsets[static_cast<std::size_t>(i)] = out.bytes;
    // ComputeLayout bounded every size (max_call_bytes and 64-bit checks),
    // so the sum of a few aligned sizes cannot wrap.
    out.bytes += (layout.params[static_cast<std::size_t>(i)].bytes + kAlignment - 1) / kAlignment *
                 kAlignment;
  }
  if (out.bytes == 0) out.bytes = kAlignment;  // mmap refuses empty mappings
  return out;
}

SharedSegment::~SharedSegment() { Reset(); }

SharedSegment::SharedSegment(SharedSegment &&other) noexcept { *this = std::move(other); }

SharedSegment &SharedSegment::operator=(SharedSegment &&other) noexcept {
  if (this != &other) {
    Reset();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    fd_ = std::exchange(other.fd_, -1);
    device_ = std::exchange(other.device_, 0);
    inode_ = std::exchange(other.inode_, 0);
  }
  return *this;
}

void SharedSegment::Reset() {
  if (data_) ::munmap(data_, size_);
  if (fd_ >= 0) ::close(fd_);
  data_ = nullptr;
  size_ = 0;
  fd_ = -1;
  device_ = inode_ = 0;
}

namespace {

// Asks for transparent huge pages for a large segment of 4 KiB pages: with
// /sys/kernel/mm/transparent_hugepage/shmem_enabled at "advise" the kernel
// then backs it with 2 MiB pages, and filling a fresh 128 MiB segment took
// 41 ms here against 121-146 ms a fault per 4 KiB page (bench/results/
// first_call-*.md). Advice only: with "never" (Debian's default) nothing
// changes.
void AdviseHuge(void *data, uint64_t bytes) {
  if (bytes >= kHugeSegmentMin) (void)::madvise(data, bytes, MADV_HUGEPAGE);
}

uint64_t MappedLength(uint64_t bytes, const struct stat &st) {
  // A hugetlbfs file's block is its page; a length that is not a multiple of
  // it is rounded up by mmap but refused by munmap, so it is rounded here.
  const uint64_t block = st.st_blksize > 0 ? static_cast<uint64_t>(st.st_blksize) : 1;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return block > page ? (bytes + block - 1) / block * block : bytes;
}

}  // namespace

// A segment of huge pages, when the administrator reserved some
// (vm.nr_hugepages) and `bytes` is large enough: filling fresh 4 KiB pages
// costs a fault each (about 1.5 GB/s for a new 32 MiB segment here), huge
// pages a few faults in all (about 6 GB/s). False, with nothing held, when
// there are none to spare: mapping a hugetlb memfd reserves its pages, and
// fails at once without them.
bool SharedSegment::CreateHuge(uint64_t bytes, SharedSegment *out) {
  if (bytes < kHugeSegmentMin) return false;
  const int fd = ::memfd_create("ninf-arrays", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_HUGETLB);
  if (fd < 0) return false;
  struct stat st {};
  uint64_t length = 0;
  bool ok = ::fstat(fd, &st) == 0 && (length = MappedLength(bytes, st)) > 0 &&
            ::ftruncate(fd, static_cast<off_t>(length)) == 0 &&
            ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) == 0;
  void *data = ok ? ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  if (data == MAP_FAILED) {
    ::close(fd);
    return false;
  }
  Adopt(fd, data, length, out);
  return true;
}

void SharedSegment::Adopt(int fd, void *data, uint64_t size, SharedSegment *out) {
  SharedSegment s;
  s.fd_ = fd;
  s.data_ = data;
  s.size_ = size;
  struct stat st {};
  if (::fstat(s.fd_, &st) == 0) {
    s.device_ = st.st_dev;
    s.inode_ = st.st_ino;
  }
  *out = std::move(s);
}

Status SharedSegment::Create(uint64_t bytes, SharedSegment *out) {
  if (CreateHuge(bytes, out)) return Status::Ok();
  const int fd = ::memfd_create("ninf-arrays", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return NoMemory("cannot create", bytes);
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0 ||
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) {
    Status st = NoMemory("cannot size", bytes);
    ::close(fd);
    return st;
  }
  void *data = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) {
    Status st = NoMemory("cannot map", bytes);
    ::close(fd);
    return st;
  }
  AdviseHuge(data, bytes);
  Adopt(fd, data, bytes, out);
  return Status::Ok();
}

Status SharedSegment::Map(int fd, uint64_t bytes, SharedSegment *out) {
  SharedSegment s;
  s.fd_ = fd;
  struct stat st {};
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0 || !(seals & F_SEAL_SHRINK) || ::fstat(fd, &st) != 0)
    return Status(NINF_ERR_PROTOCOL, "the shared segment is not a memfd sealed against shrinking");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const uint64_t length = MappedLength(bytes, st);  // a huge-page segment's whole pages
  if (size < length)
    return Status(NINF_ERR_PROTOCOL, "the shared segment holds " + std::to_string(size) +
                                         " bytes, the call needs " + std::to_string(length));
  // Populated at once: the client has touched every page already, and
  // mapping them in one go costs far less than a fault per 4 KiB page.
  s.data_ = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (s.data_ == MAP_FAILED) {
    s.data_ = nullptr;
    return NoMemory("cannot map", bytes);
  }
  s.size_ = length;
  s.device_ = st.st_dev;
  s.inode_ = st.st_ino;
  *out = std::move(s);
  return Status::Ok();
}

bool SharedSegment::Same(int fd) const {
  struct stat st {};
  return valid() && ::fstat(fd, &st) == 0 && st.st_dev == device_ && st.st_ino == inode_;
}

}  // namespace ninf
