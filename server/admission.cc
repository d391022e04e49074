#include "admission.h"

#include <sched.h>

#include <algorithm>
#include <cassert>
#include <thread>

namespace ninf::server {

int ResolveSlots(int64_t slots_setting, int cores) {
  int64_t slots = slots_setting > 0 ? slots_setting : cores;
  return static_cast<int>(std::max<int64_t>(1, slots));
}

int ResolveThreadsPerJob(int64_t threads_setting, int cores, int slots) {
  if (threads_setting > 0) return static_cast<int>(threads_setting);
  return std::max(1, cores / std::max(1, slots));
}

int CountCores() {
  // The affinity mask, not the machine's processor count: under taskset or a
  // cgroup cpuset the daemon must split only the cores it may use.
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

Admission::Admission(int slots, std::size_t queue_limit)
    : slots_(std::max(1, slots)), queue_limit_(queue_limit) {}

Admission::Decision Admission::Offer(uint64_t id) {
  if (running_ < slots_ && queue_.empty()) {
    ++running_;
    return Decision::kRun;
  }
  if (queue_.size() >= queue_limit_) return Decision::kReject;
  queue_.push_back(id);
  return Decision::kQueue;
}

void Admission::Release() {
  assert(running_ > 0);
  if (running_ > 0) --running_;
}

void Admission::Acquire() { ++running_; }

std::optional<uint64_t> Admission::Next() {
  if (running_ >= slots_ || queue_.empty()) return std::nullopt;
  uint64_t id = queue_.front();
  queue_.pop_front();
  ++running_;
  return id;
}

bool Admission::Withdraw(uint64_t id) {
  auto it = std::find(queue_.begin(), queue_.end(), id);
  if (it == queue_.end()) return false;
  queue_.erase(it);
  return true;
}

std::vector<uint64_t> Admission::TakeQueue() {
  std::vector<uint64_t> out(queue_.begin(), queue_.end());
  queue_.clear();
  return out;
}

}  // namespace ninf::server
