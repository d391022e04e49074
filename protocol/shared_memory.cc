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

Status SharedSegment::Create(uint64_t bytes, SharedSegment *out) {
  SharedSegment s;
  s.fd_ = ::memfd_create("ninf-arrays", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (s.fd_ < 0) return NoMemory("cannot create", bytes);
  if (::ftruncate(s.fd_, static_cast<off_t>(bytes)) != 0 ||
      ::fcntl(s.fd_, F_ADD_SEALS, F_SEAL_SHRINK) != 0)
    return NoMemory("cannot size", bytes);
  s.data_ = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd_, 0);
  if (s.data_ == MAP_FAILED) {
    s.data_ = nullptr;
    return NoMemory("cannot map", bytes);
  }
  s.size_ = bytes;
  struct stat st {};
  if (::fstat(s.fd_, &st) == 0) {
    s.device_ = st.st_dev;
    s.inode_ = st.st_ino;
  }
  *out = std::move(s);
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
  if (size < bytes)
    return Status(NINF_ERR_PROTOCOL, "the shared segment holds " + std::to_string(size) +
                                         " bytes, the call needs " + std::to_string(bytes));
  // Populated at once: the client has touched every page already, and
  // mapping them in one go costs far less than a fault per 4 KiB page.
  s.data_ = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (s.data_ == MAP_FAILED) {
    s.data_ = nullptr;
    return NoMemory("cannot map", bytes);
  }
  s.size_ = bytes;
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
