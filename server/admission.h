// Admission policy: how many calls run at once, how many threads each may
// use, and who waits. Pure logic without sockets or processes, so that it can
// be tested on its own.
//
// Why a static split: on an SMP server, throughput collapses once
// (running calls x threads per call) exceeds the processors (seed paper
// 004, Fig. 6). Giving each of `slots` jobs cores / slots threads, and
// queueing the calls beyond `slots`, keeps the product at or under the core
// count whatever the clients do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace ninf::server {

// Job slots from the `slots` setting: the setting itself, or `cores` when it
// is 0. Always at least 1.
int ResolveSlots(int64_t slots_setting, int cores);

// Threads per job from the `threads_per_job` setting: the setting itself, or
// max(1, cores / slots) when it is 0.
int ResolveThreadsPerJob(int64_t threads_setting, int cores, int slots);

// Processors this process may run on (its CPU affinity), at least 1.
int CountCores();

// First-come first-served admission of calls into a fixed number of slots.
// Calls are named by an opaque id. Not thread-safe: the daemon's event loop
// is its only user.
class Admission {
 public:
  enum class Decision {
    kRun,     // a slot was free and is now held by the call
    kQueue,   // the call waits; Next() hands it out later
    kReject,  // the queue is full
  };

  Admission(int slots, std::size_t queue_limit);

  // A new call arrives. It runs at once only if a slot is free and nobody
  // is waiting before it.
  Decision Offer(uint64_t id);

  // A call that held a slot has ended: its slot is free again.
  void Release();

  // A persistent executable starts another call on its own connection. That
  // call is already under way and cannot wait, so it takes a slot even when
  // all are busy; queued calls then wait until enough slots are free again.
  void Acquire();

  // The first queued call, if a slot is free; the call then holds that slot.
  // Call it after Release() until it returns nothing.
  std::optional<uint64_t> Next();

  // Removes a queued call (its client went away). False if it is not queued.
  bool Withdraw(uint64_t id);

  // Empties the queue and returns its calls in arrival order (shutdown).
  std::vector<uint64_t> TakeQueue();

  int slots() const { return slots_; }
  int running() const { return running_; }
  std::size_t queued() const { return queue_.size(); }
  std::size_t queue_limit() const { return queue_limit_; }

 private:
  int slots_;
  std::size_t queue_limit_;
  int running_ = 0;
  std::deque<uint64_t> queue_;
};

}  // namespace ninf::server
