#include "protocol/slot_lease.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace ninf {

// The shared page. Every field is read and written with atomic builtins:
// two processes, no lock.
struct SlotLease::Page {
  uint32_t word;
  uint32_t phase;
  uint64_t calls;
  uint64_t call_started_ns;
};

namespace {

constexpr std::size_t kPageBytes = 4096;
static_assert(sizeof(uint64_t) * 3 <= kPageBytes);

uint32_t Load(const uint32_t *at) { return __atomic_load_n(at, __ATOMIC_ACQUIRE); }

bool Swap(uint32_t *at, uint32_t from, uint32_t to) {
  return __atomic_compare_exchange_n(at, &from, to, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

uint64_t MonotonicNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

Status Failed(const char *what) {
  return Status(NINF_ERR_INTERNAL,
                std::string("slot lease page: ") + what + ": " + std::strerror(errno));
}

}  // namespace

SlotLease::~SlotLease() { Reset(); }

SlotLease::SlotLease(SlotLease &&other) noexcept
    : page_(std::exchange(other.page_, nullptr)), fd_(std::exchange(other.fd_, -1)) {}

SlotLease &SlotLease::operator=(SlotLease &&other) noexcept {
  if (this != &other) {
    Reset();
    page_ = std::exchange(other.page_, nullptr);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void SlotLease::Reset() {
  if (page_) ::munmap(page_, kPageBytes);
  if (fd_ >= 0) ::close(fd_);
  page_ = nullptr;
  fd_ = -1;
}

Status SlotLease::Create(SlotLease *out) {
  const int fd = ::memfd_create("ninf-slot-lease", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return Failed("memfd_create");
  // Sealed at its size: the executable can neither shrink it under ninfd
  // (a fault in ninfd) nor grow it.
  if (::ftruncate(fd, kPageBytes) != 0 ||
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    Status st = Failed("size");
    ::close(fd);
    return st;
  }
  return Map(fd, out);
}

Status SlotLease::Map(int fd, SlotLease *out) {
  // Only a memfd has seals (F_GET_SEALS fails on any other file): a
  // regular file could be truncated under ninfd however it was opened.
  struct stat st {};
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_size < static_cast<off_t>(kPageBytes) || seals < 0 || (seals & F_SEAL_SHRINK) == 0) {
    ::close(fd);
    errno = EINVAL;
    return Failed("not a sealed page");
  }
  void *at = ::mmap(nullptr, kPageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (at == MAP_FAILED) {
    Status s = Failed("mmap");
    ::close(fd);
    return s;
  }
  SlotLease lease;
  lease.page_ = static_cast<Page *>(at);
  lease.fd_ = fd;
  *out = std::move(lease);
  return Status::Ok();
}

bool SlotLease::Grant() { return page_ && Swap(&page_->word, kLeaseNone, kLeaseIdle); }

SlotLease::Taken SlotLease::TakeBack() {
  if (!page_) return Taken::kNotLeased;
  for (;;) {
    const uint32_t word = Load(&page_->word);
    switch (word) {
      case kLeaseNone:
        return Taken::kNotLeased;
      case kLeaseIdle:
        if (Swap(&page_->word, kLeaseIdle, kLeaseNone)) return Taken::kNow;
        break;  // the executable began a call meanwhile: look again
      case kLeaseInCall:
        if (Swap(&page_->word, kLeaseInCall, kLeaseRevoked)) return Taken::kAfterCall;
        break;  // that call ended meanwhile: look again
      case kLeaseRevoked:
        return Taken::kAfterCall;
      default:  // nonsense: no lease from here on
        __atomic_store_n(&page_->word, kLeaseNone, __ATOMIC_RELEASE);
        return Taken::kNow;
    }
  }
}

bool SlotLease::StillLeased() {
  if (!page_) return false;
  const uint32_t word = Load(&page_->word);
  if (word == kLeaseIdle || word == kLeaseInCall || word == kLeaseRevoked) return true;
  __atomic_store_n(&page_->word, kLeaseNone, __ATOMIC_RELEASE);
  return false;
}

bool SlotLease::InCall() const {
  if (!page_) return false;
  const uint32_t word = Load(&page_->word);
  return word == kLeaseInCall || word == kLeaseRevoked;
}

LeasePhase SlotLease::Phase() const {
  if (!page_) return kLeasePhaseNone;
  const uint32_t phase = __atomic_load_n(&page_->phase, __ATOMIC_RELAXED);
  return phase <= kLeasePhaseReplying ? static_cast<LeasePhase>(phase) : kLeasePhaseComputing;
}

uint64_t SlotLease::CallStartedNs() const {
  return page_ ? __atomic_load_n(&page_->call_started_ns, __ATOMIC_RELAXED) : 0;
}

uint64_t SlotLease::LeasedCalls() const {
  return page_ ? __atomic_load_n(&page_->calls, __ATOMIC_RELAXED) : 0;
}

bool SlotLease::Begin() {
  if (!page_) return false;
  // The step and the start first: ninfd may look as soon as the word says
  // a call is under way.
  __atomic_store_n(&page_->phase, kLeasePhaseReceiving, __ATOMIC_RELAXED);
  __atomic_store_n(&page_->call_started_ns, MonotonicNs(), __ATOMIC_RELAXED);
  if (!Swap(&page_->word, kLeaseIdle, kLeaseInCall)) return false;
  __atomic_add_fetch(&page_->calls, 1, __ATOMIC_RELAXED);
  return true;
}

void SlotLease::SetPhase(LeasePhase phase) {
  if (page_) __atomic_store_n(&page_->phase, phase, __ATOMIC_RELAXED);
}

bool SlotLease::RevokeAsked() const { return page_ && Load(&page_->word) == kLeaseRevoked; }

bool SlotLease::End() {
  if (!page_) return false;
  __atomic_store_n(&page_->phase, kLeasePhaseNone, __ATOMIC_RELAXED);
  if (Swap(&page_->word, kLeaseInCall, kLeaseIdle)) return true;
  __atomic_store_n(&page_->word, kLeaseNone, __ATOMIC_RELEASE);
  return false;
}

}  // namespace ninf
