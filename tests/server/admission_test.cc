// Unit tests of the admission policy (server/admission.h): no sockets.
#include <catch2/catch.hpp>

#include "policy.h"

using ninf::server::Admission;
using ninf::server::ResolveSlots;
using ninf::server::ResolveThreadsPerJob;
using Decision = Admission::Decision;

TEST_CASE("admission_slots_default_to_cores", "[admission]") {
  CHECK(ResolveSlots(0, 8) == 8);
  CHECK(ResolveSlots(3, 8) == 3);
  CHECK(ResolveSlots(16, 8) == 16);  // more slots than cores is the admin's choice
  CHECK(ResolveSlots(0, 0) == 1);    // never zero slots
}

TEST_CASE("admission_threads_split_cores_between_slots", "[admission]") {
  CHECK(ResolveThreadsPerJob(0, 8, 1) == 8);  // one job gets every core
  CHECK(ResolveThreadsPerJob(0, 8, 2) == 4);
  CHECK(ResolveThreadsPerJob(0, 8, 3) == 2);  // rounded down: never oversubscribe
  CHECK(ResolveThreadsPerJob(0, 2, 8) == 1);  // at least one thread
  CHECK(ResolveThreadsPerJob(5, 8, 2) == 5);  // an explicit setting wins
  // The static split keeps slots x threads within the cores (seed 004, Fig. 6).
  for (int cores = 1; cores <= 64; ++cores)
    for (int slots = 1; slots <= cores; ++slots)
      CHECK(slots * ResolveThreadsPerJob(0, cores, slots) <= cores);
}

TEST_CASE("admission_fills_slots_then_queues_fcfs", "[admission]") {
  Admission a(2, 3);
  CHECK(a.Offer(1) == Decision::kRun);
  CHECK(a.Offer(2) == Decision::kRun);
  CHECK(a.running() == 2);
  CHECK(a.Offer(3) == Decision::kQueue);
  CHECK(a.Offer(4) == Decision::kQueue);
  CHECK(a.Offer(5) == Decision::kQueue);
  CHECK(a.Offer(6) == Decision::kReject);  // queue full
  CHECK(a.queued() == 3);
  CHECK_FALSE(a.Next().has_value());  // no free slot yet

  a.Release();
  auto next = a.Next();
  REQUIRE(next.has_value());
  CHECK(*next == 3);  // first come, first served
  CHECK_FALSE(a.Next().has_value());
  CHECK(a.running() == 2);
  CHECK(a.queued() == 2);
}

TEST_CASE("admission_newcomer_never_overtakes_queue", "[admission]") {
  Admission a(1, 10);
  CHECK(a.Offer(1) == Decision::kRun);
  CHECK(a.Offer(2) == Decision::kQueue);
  a.Release();
  // A slot is free but call 2 waits: a new call must queue behind it.
  CHECK(a.Offer(3) == Decision::kQueue);
  CHECK(a.Next() == 2u);
  CHECK_FALSE(a.Next().has_value());
}

TEST_CASE("admission_zero_queue_limit_rejects_when_busy", "[admission]") {
  Admission a(1, 0);
  CHECK(a.Offer(1) == Decision::kRun);
  CHECK(a.Offer(2) == Decision::kReject);
}

TEST_CASE("admission_withdraw_removes_a_queued_call", "[admission]") {
  Admission a(1, 10);
  a.Offer(1);
  a.Offer(2);
  a.Offer(3);
  CHECK(a.Withdraw(2));
  CHECK_FALSE(a.Withdraw(2));
  CHECK_FALSE(a.Withdraw(1));  // running, not queued
  a.Release();
  CHECK(a.Next() == 3u);
}

TEST_CASE("admission_persistent_next_call_waits_like_any_other", "[admission]") {
  Admission a(1, 10);
  CHECK(a.Offer(1) == Decision::kRun);    // a persistent executable's first call
  a.Release();                            // its call is done: idle, holds no slot
  CHECK(a.Offer(2) == Decision::kRun);    // another call takes the slot
  CHECK(a.Offer(1) == Decision::kQueue);  // the persistent one's next call waits
  CHECK(a.running() == 1);                // slots bound concurrency absolutely
  a.Release();
  CHECK(a.Next() == 1u);
}

TEST_CASE("admission_take_queue_empties_in_order", "[admission]") {
  Admission a(1, 10);
  a.Offer(1);
  a.Offer(2);
  a.Offer(3);
  CHECK(a.TakeQueue() == std::vector<uint64_t>{2, 3});
  CHECK(a.queued() == 0);
  CHECK(a.running() == 1);
}
