// Unit tests of the scheduler (server/admission.h): no sockets, no clock.
#include "server/admission.h"

#include <catch2/catch.hpp>
#include <map>

using ninf::server::AdaptiveThreads;
using ninf::server::Admission;
using ninf::server::CallDemand;
using ninf::server::Grant;
using ninf::server::LoneCallThreads;
using ninf::server::QueueOrder;
using ninf::server::ResolveSlots;
using ninf::server::ResolveThreadsPerJob;
using ninf::server::SchedulerConfig;
using ninf::server::ThreadBudget;
using Decision = Admission::Decision;

namespace {

// `slots` slots of `threads` threads each, FCFS: the budget of the tests
// that are about slots and queue order, not threads.
SchedulerConfig Slots(int slots, std::size_t queue_limit) {
  SchedulerConfig c;
  c.cores = slots;
  c.slots = slots;
  c.budget = ThreadBudget::kSplit;
  c.queue_limit = queue_limit;
  return c;
}

SchedulerConfig Adaptive(int cores) {
  SchedulerConfig c;
  c.cores = cores;
  c.slots = cores;
  c.budget = ThreadBudget::kAdaptive;
  c.demand_window_seconds = 2;
  return c;
}

// Offer with no prediction at time `now`; the threads granted, or 0.
Decision OfferAt(Admission &a, uint64_t id, double now = 0, int *threads = nullptr,
                 double predicted = 0) {
  int ignored = 0;
  return a.Offer(CallDemand{id, predicted}, now, threads ? threads : &ignored);
}

std::optional<uint64_t> NextId(Admission &a, double now = 0) {
  std::optional<Grant> g = a.Next(now);
  if (!g) return std::nullopt;
  return g->id;
}

}  // namespace

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
  Admission a(Slots(2, 3));
  CHECK(OfferAt(a, 1) == Decision::kRun);
  CHECK(OfferAt(a, 2) == Decision::kRun);
  CHECK(a.running() == 2);
  CHECK(OfferAt(a, 3) == Decision::kQueue);
  CHECK(OfferAt(a, 4) == Decision::kQueue);
  CHECK(OfferAt(a, 5) == Decision::kQueue);
  CHECK(OfferAt(a, 6) == Decision::kReject);  // queue full
  CHECK(a.queued() == 3);
  CHECK_FALSE(a.Next(0).has_value());  // no free slot yet

  a.Release(1);
  CHECK(NextId(a) == 3u);  // first come, first served
  CHECK_FALSE(a.Next(0).has_value());
  CHECK(a.running() == 2);
  CHECK(a.queued() == 2);
}

TEST_CASE("admission_newcomer_never_overtakes_queue", "[admission]") {
  Admission a(Slots(1, 10));
  CHECK(OfferAt(a, 1) == Decision::kRun);
  CHECK(OfferAt(a, 2) == Decision::kQueue);
  a.Release(1);
  // A slot is free but call 2 waits: a new call must queue behind it.
  CHECK(OfferAt(a, 3) == Decision::kQueue);
  CHECK(NextId(a) == 2u);
  CHECK_FALSE(a.Next(0).has_value());
}

// TryRun: a call whose arguments are all in takes a free slot at once, and
// otherwise leaves no trace (it then goes the arrival way).
TEST_CASE("admission_try_run_takes_a_free_slot_or_changes_nothing", "[admission]") {
  Admission a(Slots(1, 10));
  int threads = 0;
  CHECK(a.TryRun(CallDemand{1, 0}, 0, &threads));
  CHECK(threads >= 1);
  CHECK(a.running() == 1);
  CHECK_FALSE(a.TryRun(CallDemand{2, 0}, 0, &threads));  // no slot: nothing queued
  CHECK(a.queued() == 0);
  CHECK(OfferAt(a, 3) == Decision::kQueue);
  a.Release(1);
  // A slot is free but call 3 waits for it: TryRun does not overtake.
  CHECK_FALSE(a.TryRun(CallDemand{4, 0}, 0, &threads));
  CHECK(NextId(a) == 3u);
  CHECK(a.running() == 1);
}

TEST_CASE("admission_zero_queue_limit_rejects_when_busy", "[admission]") {
  Admission a(Slots(1, 0));
  CHECK(OfferAt(a, 1) == Decision::kRun);
  CHECK(OfferAt(a, 2) == Decision::kReject);
}

TEST_CASE("admission_withdraw_removes_a_queued_call", "[admission]") {
  Admission a(Slots(1, 10));
  OfferAt(a, 1);
  OfferAt(a, 2);
  OfferAt(a, 3);
  CHECK(a.Withdraw(2));
  CHECK_FALSE(a.Withdraw(2));
  CHECK_FALSE(a.Withdraw(1));  // running, not queued
  a.Release(1);
  CHECK(NextId(a) == 3u);
}

TEST_CASE("admission_persistent_next_call_waits_like_any_other", "[admission]") {
  Admission a(Slots(1, 10));
  CHECK(OfferAt(a, 1) == Decision::kRun);    // a persistent executable's first call
  a.Release(1);                              // its call is done: idle, holds no slot
  CHECK(OfferAt(a, 2) == Decision::kRun);    // another call takes the slot
  CHECK(OfferAt(a, 1) == Decision::kQueue);  // the persistent one's next call waits
  CHECK(a.running() == 1);                   // slots bound concurrency absolutely
  a.Release(1);
  CHECK(NextId(a) == 1u);
}

TEST_CASE("admission_take_queue_empties_in_order", "[admission]") {
  Admission a(Slots(1, 10));
  OfferAt(a, 1);
  OfferAt(a, 2);
  OfferAt(a, 3);
  CHECK(a.TakeQueue() == std::vector<uint64_t>{2, 3});
  CHECK(a.queued() == 0);
  CHECK(a.running() == 1);
}

TEST_CASE("admission_budgets_name_their_threads", "[admission]") {
  SchedulerConfig c;
  c.cores = 8;
  c.slots = 4;
  c.fixed_threads = 6;
  c.budget = ThreadBudget::kFixed;
  CHECK(LoneCallThreads(c) == 6);
  c.budget = ThreadBudget::kSplit;
  CHECK(LoneCallThreads(c) == 2);
  c.budget = ThreadBudget::kAdaptive;
  CHECK(LoneCallThreads(c) == 8);

  // fixed: every call its threads, even past the cores (Fig. 6 on purpose).
  c.budget = ThreadBudget::kFixed;
  Admission a(c);
  for (uint64_t id = 1; id <= 4; ++id) {
    int threads = 0;
    CHECK(OfferAt(a, id, 0, &threads) == Decision::kRun);
    CHECK(threads == 6);
  }
  CHECK(a.threads_held() == 24);
  CHECK(OfferAt(a, 5) == Decision::kQueue);  // but never more than `slots` calls
}

TEST_CASE("admission_adaptive_threads_rule", "[admission]") {
  CHECK(AdaptiveThreads(8, 0, 1) == 8);  // alone: every core
  CHECK(AdaptiveThreads(8, 0, 2) == 4);  // a pair: half each
  CHECK(AdaptiveThreads(8, 4, 2) == 4);
  CHECK(AdaptiveThreads(8, 6, 2) == 2);  // no more than what is free
  CHECK(AdaptiveThreads(8, 8, 1) == 0);  // nothing free: wait
  CHECK(AdaptiveThreads(2, 0, 5) == 1);  // more calls than cores: one each
  CHECK(AdaptiveThreads(8, 0, 3) == 2);  // rounded down
  // Whatever the demand, the cores are never oversubscribed.
  for (int cores = 1; cores <= 16; ++cores)
    for (int held = 0; held <= cores; ++held)
      for (int demand = 1; demand <= 20; ++demand)
        CHECK(held + AdaptiveThreads(cores, held, demand) <= cores);
}

TEST_CASE("admission_adaptive_lone_call_gets_every_core", "[admission]") {
  Admission a(Adaptive(8));
  int threads = 0;
  CHECK(OfferAt(a, 1, 0.0, &threads) == Decision::kRun);
  CHECK(threads == 8);
  // A second call finds no core free: it waits instead of oversubscribing.
  CHECK(OfferAt(a, 2, 0.1) == Decision::kQueue);
  a.Release(8);
  // It remembers that two calls wanted the machine: half each from now on.
  std::optional<Grant> g = a.Next(0.5);
  REQUIRE(g.has_value());
  CHECK(g->id == 2u);
  CHECK(g->threads == 4);
  CHECK(OfferAt(a, 3, 0.6, &threads) == Decision::kRun);  // the first client's next call
  CHECK(threads == 4);
  CHECK(a.threads_held() == 8);
}

TEST_CASE("admission_adaptive_closed_loop_pair_splits_then_lone_client_takes_all", "[admission]") {
  Admission a(Adaptive(2));
  int threads = 0;
  // Two clients in a closed loop: after the first overlap, one thread each,
  // both running side by side.
  REQUIRE(OfferAt(a, 1, 0.0, &threads) == Decision::kRun);
  REQUIRE(OfferAt(a, 2, 0.0) == Decision::kQueue);
  a.Release(threads);
  std::optional<Grant> g = a.Next(1.0);
  REQUIRE(g);
  CHECK(g->threads == 1);
  double t = 1.0;
  uint64_t id = 3;
  for (int round = 0; round < 10; ++round) {
    t += 0.5;
    CHECK(OfferAt(a, id++, t, &threads) == Decision::kRun);
    CHECK(threads == 1);
    CHECK(a.running() == 2);
    a.Release(1);
  }
  a.Release(1);
  // One client goes away: once the window has passed, the other is alone
  // and gets both cores again.
  CHECK(OfferAt(a, id++, t + 0.1, &threads) == Decision::kRun);
  CHECK(threads == 1);  // the pair is still remembered
  a.Release(1);
  CHECK(OfferAt(a, id++, t + 2.5, &threads) == Decision::kRun);
  CHECK(threads == 2);
}

TEST_CASE("admission_sjf_runs_short_calls_first", "[admission]") {
  SchedulerConfig c = Slots(1, 10);
  c.order = QueueOrder::kSjf;
  Admission a(c);
  REQUIRE(OfferAt(a, 1, 0.0) == Decision::kRun);
  // Arrivals at 0.1 .. 0.4, predicted 10 s, 1 s, 5 s, 0 s (unknown).
  OfferAt(a, 2, 0.1, nullptr, 10);
  OfferAt(a, 3, 0.2, nullptr, 1);
  OfferAt(a, 4, 0.3, nullptr, 5);
  OfferAt(a, 5, 0.4, nullptr, 0);
  std::vector<uint64_t> order;
  for (int i = 0; i < 4; ++i) {
    a.Release(1);
    order.push_back(*NextId(a, 1.0));
  }
  CHECK(order == std::vector<uint64_t>{5, 3, 4, 2});
}

// Releases the one slot and starts the next queued call until call `id`
// starts; returns how many started before it.
int CallsStartedBefore(Admission &a, uint64_t id) {
  int before = 0;
  for (;;) {
    a.Release(1);
    std::optional<uint64_t> next = NextId(a, 100);
    REQUIRE(next);
    if (*next == id) return before;
    ++before;
  }
}

TEST_CASE("admission_sjf_aging_bounds_overtaking", "[admission]") {
  SchedulerConfig c = Slots(1, 100);
  c.order = QueueOrder::kSjf;
  c.sjf_aging = 1;
  Admission a(c);
  REQUIRE(OfferAt(a, 1, 0.0) == Decision::kRun);
  // A 10 s call arrives at t = 0, then a stream of 1 s calls, one per
  // second. Only those that arrived within its 10 s go before it.
  OfferAt(a, 100, 0.0, nullptr, 10);
  for (uint64_t i = 0; i < 30; ++i) OfferAt(a, 200 + i, 0.5 + static_cast<double>(i), nullptr, 1);
  const int before = CallsStartedBefore(a, 100);
  // Arrivals 0.5 .. 8.5 have keys 1.5 .. 9.5 < 10; 9.5 has 10.5.
  CHECK(before == 9);
}

TEST_CASE("admission_sjf_aging_factor_widens_the_window", "[admission]") {
  // sjf_aging 3: a 2 s call is overtaken by the 0.1 s calls that arrive
  // within 3 x 2 s = 6 s after it, and by no later one.
  SchedulerConfig c = Slots(1, 100);
  c.order = QueueOrder::kSjf;
  c.sjf_aging = 3;
  Admission a(c);
  REQUIRE(OfferAt(a, 1, 0.0) == Decision::kRun);
  OfferAt(a, 100, 0.0, nullptr, 2);
  for (uint64_t i = 0; i < 10; ++i) OfferAt(a, 200 + i, 1.0 + static_cast<double>(i), nullptr, 0.1);
  const int before = CallsStartedBefore(a, 100);
  // Arrivals 1 .. 5 have keys 1.3 .. 5.3 < 6; 6 has 6.3.
  CHECK(before == 5);
}

TEST_CASE("admission_sjf_withdraw_and_take_queue_in_run_order", "[admission]") {
  SchedulerConfig c = Slots(1, 10);
  c.order = QueueOrder::kSjf;
  Admission a(c);
  OfferAt(a, 1, 0.0);
  OfferAt(a, 2, 0.1, nullptr, 9);
  OfferAt(a, 3, 0.2, nullptr, 3);
  OfferAt(a, 4, 0.3, nullptr, 1);
  CHECK(a.Withdraw(3));
  CHECK(a.TakeQueue() == std::vector<uint64_t>{4, 2});
}

TEST_CASE("admission_adaptive_single_threaded_calls_take_one_core", "[admission]") {
  Admission a(Adaptive(4));
  int threads = 0;
  // A routine without a thread library would leave the other cores idle.
  CHECK(a.Offer(CallDemand{1, 0, 1}, 0, &threads) == Decision::kRun);
  CHECK(threads == 1);
  CHECK(a.Offer(CallDemand{2, 0, 1}, 0, &threads) == Decision::kRun);
  CHECK(threads == 1);
  // A threaded one beside them gets what is left (its share of 3 calls).
  CHECK(a.Offer(CallDemand{3, 0, 0}, 0, &threads) == Decision::kRun);
  CHECK(threads == 1);
  CHECK(a.threads_held() == 3);
}

TEST_CASE("admission_parallel_calls_hold_a_core_per_rank", "[admission]") {
  for (ThreadBudget budget :
       {ThreadBudget::kAdaptive, ThreadBudget::kSplit, ThreadBudget::kFixed}) {
    SchedulerConfig c = Adaptive(4);
    c.slots = 8;  // cores, not slots, are the limit here
    c.budget = budget;
    c.fixed_threads = 1;
    Admission a(c);
    int threads = 0;
    // Two 2-rank jobs fill 4 cores; a third waits, whatever the budget.
    REQUIRE(a.Offer({.id = 1, .ranks = 2}, 0, &threads) == Decision::kRun);
    CHECK(threads == 2);
    REQUIRE(a.Offer({.id = 2, .ranks = 2}, 0, &threads) == Decision::kRun);
    CHECK(threads == 2);
    CHECK(a.Offer({.id = 3, .ranks = 2}, 0, &threads) == Decision::kQueue);
    CHECK(a.threads_held() == 4);
    CHECK_FALSE(a.Next(0).has_value());
    a.Release(2);
    std::optional<Grant> g = a.Next(0);
    REQUIRE(g.has_value());
    CHECK(g->id == 3);
    CHECK(g->threads == 2);
  }
}

TEST_CASE("admission_a_parallel_call_waits_for_all_its_cores", "[admission]") {
  SchedulerConfig c = Adaptive(2);
  c.slots = 4;
  Admission a(c);
  int threads = 0;
  REQUIRE(a.Offer({.id = 1, .max_threads = 1}, 0, &threads) == Decision::kRun);
  CHECK(threads == 1);
  // One core is free; the 2-rank job needs both.
  CHECK(a.Offer({.id = 2, .ranks = 2}, 0, &threads) == Decision::kQueue);
  CHECK_FALSE(a.Next(0).has_value());
  a.Release(1);
  std::optional<Grant> g = a.Next(0);
  REQUIRE(g.has_value());
  CHECK(g->threads == 2);
  // More ranks than cores (oversubscribed): it holds every core, no more.
  a.Release(2);
  REQUIRE(a.Offer({.id = 3, .ranks = 5}, 0, &threads) == Decision::kRun);
  CHECK(threads == 2);
}

// Per-user quotas (users.h): a user at its slot quota waits even on an idle
// server, and does not hold back the users queued behind it; its queue
// quota refuses the call that would wait past it.
TEST_CASE("admission_user_slot_quota", "[admission]") {
  Admission a(Slots(4, 16));
  int threads = 0;
  auto alice = [](uint64_t id) {
    return CallDemand{.id = id, .user = "alice", .user_slots = 2, .user_queued = 2};
  };
  CHECK(a.Offer(alice(1), 0, &threads) == Decision::kRun);
  CHECK(a.Offer(alice(2), 0, &threads) == Decision::kRun);
  // Two slots are free, but alice holds her two.
  CHECK(a.Offer(alice(3), 0, &threads) == Decision::kQueue);
  CHECK(a.Offer(alice(4), 0, &threads) == Decision::kQueue);
  CHECK(a.Offer(alice(5), 0, &threads) == Decision::kUserQueueFull);
  CHECK(a.running_of("alice") == 2);
  CHECK(a.queued_of("alice") == 2);
  // Bob is not held back by alice's waiting calls.
  CHECK(a.Offer(CallDemand{.id = 10, .user = "bob"}, 0, &threads) == Decision::kRun);
  CHECK(!a.Next(0).has_value());  // alice still at her quota
  a.Release(threads, "alice");
  std::optional<Grant> g = a.Next(0);
  REQUIRE(g.has_value());
  CHECK(g->id == 3);
  CHECK(!a.Next(0).has_value());
  CHECK(a.running_of("alice") == 2);
  CHECK(a.queued_of("alice") == 1);
  CHECK(a.Withdraw(4));
  CHECK(a.queued_of("alice") == 0);
}

TEST_CASE("admission_user_quota_skips_capped_head", "[admission]") {
  Admission a(Slots(2, 16));
  int threads = 0;
  CHECK(a.Offer(CallDemand{.id = 1, .user = "alice", .user_slots = 1}, 0, &threads) ==
        Decision::kRun);
  CHECK(a.Offer(CallDemand{.id = 2, .user = "bob"}, 0, &threads) == Decision::kRun);
  // Both slots busy: alice's and carol's calls queue, alice's first.
  CHECK(a.Offer(CallDemand{.id = 3, .user = "alice", .user_slots = 1}, 0, &threads) ==
        Decision::kQueue);
  CHECK(a.Offer(CallDemand{.id = 4, .user = "carol"}, 0, &threads) == Decision::kQueue);
  a.Release(threads, "bob");  // bob's slot frees: alice is at her quota, carol goes
  std::optional<Grant> g = a.Next(0);
  REQUIRE(g.has_value());
  CHECK(g->id == 4);
  a.Release(threads, "alice");
  g = a.Next(0);
  REQUIRE(g.has_value());
  CHECK(g->id == 3);
}

// --- Admission after arrival (ArrivalGate, ArrivesFirst, SJF's transfer) ---

using ninf::server::AdmissionOrder;
using ninf::server::ArrivalBounds;
using ninf::server::ArrivalFacts;
using ninf::server::ArrivalGate;
using ninf::server::ArrivalLoad;
using ninf::server::ArrivesFirst;
using ninf::server::ChargedArrivalBytes;
using ninf::server::MayArrive;
using ninf::server::ParseAdmissionOrder;
using ninf::server::ReportedArrivalBytes;
using ninf::server::ResolveArrivalBounds;
using ninf::server::TransferSecondsAhead;

TEST_CASE("admission_after_arrival_applies_to_direct_one_shot_and_handle_calls", "[admission]") {
  AdmissionOrder order = AdmissionOrder::kStart;
  CHECK(ParseAdmissionOrder("arrival", &order));
  CHECK(order == AdmissionOrder::kArrival);
  CHECK(ParseAdmissionOrder("start", &order));
  CHECK(order == AdmissionOrder::kStart);
  CHECK_FALSE(ParseAdmissionOrder("Arrival", &order));
  CHECK(ArrivesFirst({}));
  CHECK_FALSE(ArrivesFirst({.order = AdmissionOrder::kStart}));
  // A two-phase call's client leaves with its ticket; an MPI job or a Slurm
  // step holds cores by its launch; a redirected client comes to the
  // executable elsewhere: the slot first, as before.
  CHECK_FALSE(ArrivesFirst({.two_phase = true}));
  CHECK_FALSE(ArrivesFirst({.direct_launch = false}));
  CHECK_FALSE(ArrivesFirst({.redirected = true}));
}

TEST_CASE("admission_arrival_bounds_resolve_from_memory", "[admission]") {
  const uint64_t gib = uint64_t{1} << 30;
  ArrivalBounds b = ResolveArrivalBounds(256, 0, 64, 0, 16 * gib);
  CHECK(b.calls == 256);
  CHECK(b.bytes == 4 * gib);  // a quarter of the memory
  CHECK(b.client_calls == 64);
  CHECK(b.client_bytes == gib);  // a quarter of the server's bytes
  b = ResolveArrivalBounds(8, 1000, 0, 300, 16 * gib);
  CHECK(b.bytes == 1000);
  CHECK(b.client_calls == 8);  // 0: the server's bound
  CHECK(b.client_bytes == 300);
  // Unknown bytes (TLS) are charged an even share of the bound.
  CHECK(ChargedArrivalBytes(true, 123, b) == 123);
  CHECK(ChargedArrivalBytes(false, 123, b) == 1000 / 8);
  // A handle's executable reports its call's bytes: bounded by what any
  // call may bring, and never near a wrap of the gate's sums.
  CHECK(ReportedArrivalBytes(123, 1000) == 123);
  CHECK(ReportedArrivalBytes(5000, 1000) == 1000);
  CHECK(ReportedArrivalBytes(UINT64_MAX, 0) == uint64_t{1} << 48);
  CHECK(ReportedArrivalBytes(UINT64_MAX, INT64_MAX) == uint64_t{1} << 48);
}

TEST_CASE("admission_a_call_may_arrive_within_the_bounds_or_alone", "[admission]") {
  CHECK(MayArrive(ArrivalLoad{0, 0}, 100, 2, 50));  // alone: even over the byte bound
  CHECK(MayArrive(ArrivalLoad{1, 20}, 30, 2, 50));
  CHECK_FALSE(MayArrive(ArrivalLoad{1, 20}, 31, 2, 50));
  CHECK_FALSE(MayArrive(ArrivalLoad{2, 0}, 0, 2, 50));         // the call bound
  CHECK(MayArrive(ArrivalLoad{5, 1u << 30}, 1u << 30, 0, 0));  // 0: no bound
  CHECK_FALSE(MayArrive(ArrivalLoad{1, 60}, 0, 2, 50));        // over already (a lone large call)
}

TEST_CASE("admission_arrival_gate_holds_calls_and_bytes_under_the_bounds", "[admission]") {
  const ArrivalBounds b{.calls = 3, .bytes = 100, .client_calls = 2, .client_bytes = 60};
  ArrivalGate g;
  CHECK(g.Offer({1, "a", 40}, b));
  CHECK(g.Offer({2, "a", 20}, b));
  CHECK_FALSE(g.Offer({3, "a", 1}, b));  // client a has its 2 calls
  CHECK(g.Offer({4, "b", 30}, b));       // b is not held back by a's waiting call
  CHECK(g.held().calls == 3);
  CHECK(g.held().bytes == 90);
  CHECK(g.held_of("a").bytes == 60);
  CHECK_FALSE(g.Offer({5, "c", 5}, b));  // the server's 3 calls
  CHECK(g.waiting().calls == 2);
  CHECK(g.waiting().bytes == 6);
  CHECK_FALSE(g.Next(b).has_value());
  // One of a's calls gets its slot: a's waiting call fits now, and goes
  // first (arrival order).
  g.Done(1);
  CHECK(g.Next(b) == 3u);
  CHECK_FALSE(g.Next(b).has_value());  // the server is full again
  g.Done(2);
  CHECK(g.Next(b) == 5u);
  CHECK(g.waiting().calls == 0);
  g.Done(2);  // twice: nothing
  CHECK(g.held().calls == 3);
  CHECK(g.holds(5));
  CHECK_FALSE(g.holds(2));
}

TEST_CASE("admission_arrival_gate_keeps_order_for_a_large_call", "[admission]") {
  const ArrivalBounds b{.calls = 10, .bytes = 100, .client_calls = 10, .client_bytes = 100};
  ArrivalGate g;
  CHECK(g.Offer({1, "a", 60}, b));
  CHECK_FALSE(g.Offer({2, "b", 90}, b));  // does not fit beside call 1
  // A small newcomer would fit, but the large call waits before it.
  CHECK_FALSE(g.Offer({3, "c", 10}, b));
  CHECK_FALSE(g.Next(b).has_value());
  g.Done(1);
  CHECK(g.Next(b) == 2u);
  CHECK(g.Next(b) == 3u);
  CHECK(g.held().bytes == 100);
  // A call larger than the byte bound still arrives once it is alone.
  g.Done(2);
  g.Done(3);
  CHECK(g.Offer({4, "a", 500}, b));
  CHECK_FALSE(g.Offer({5, "a", 1}, b));
  CHECK(g.Withdraw(5));
  CHECK_FALSE(g.Withdraw(5));
  CHECK(g.waiting().calls == 0);
  CHECK(g.Offer({6, "b", 0}, b) == false);  // 500 > 100 held: nothing more fits
  CHECK(g.TakeWaiting() == std::vector<uint64_t>{6});
  // A call that gave its slot back while its result goes out counts again,
  // room or not, once.
  g.Rehold({7, "b", 50});
  g.Rehold({7, "b", 50});
  CHECK(g.held().calls == 2);
  CHECK(g.held().bytes == 550);
  g.Done(7);
  CHECK(g.held().bytes == 500);
}

TEST_CASE("admission_sjf_counts_the_transfer_ahead_and_ages_from_arrival", "[admission]") {
  // The result over the rate the arguments came at; nothing when the rate
  // says nothing (a few bytes, or no time).
  CHECK(TransferSecondsAhead(8u << 20, 4u << 20, 2.0) == Approx(4.0));
  CHECK(TransferSecondsAhead(8u << 20, 1000, 2.0) == 0);
  CHECK(TransferSecondsAhead(8u << 20, 4u << 20, 0.0) == 0);
  CHECK(TransferSecondsAhead(0, 4u << 20, 2.0) == 0);

  SchedulerConfig c = Slots(1, 10);
  c.order = QueueOrder::kSjf;
  c.sjf_aging = 1;
  Admission a(c);
  int threads = 0;
  CHECK(a.Offer(CallDemand{1}, 0, &threads) == Decision::kRun);
  // Equal run times; call 2's result takes 5 s to send, call 3's none.
  CallDemand two{2, 1.0};
  two.transfer_seconds = 5;
  CallDemand three{3, 1.0};
  CHECK(a.Offer(two, 10, &threads) == Decision::kQueue);
  CHECK(a.Offer(three, 11, &threads) == Decision::kQueue);
  a.Release(1);
  CHECK(NextId(a, 12) == 3u);  // 11 + 1 < 10 + 1 + 5
  a.Release(1);
  CHECK(NextId(a, 12) == 2u);

  // Aging counts from the CALL's arrival, not from the moment a call whose
  // arguments came over a slow link asks for its slot.
  Admission b(c);
  CHECK(b.Offer(CallDemand{1}, 0, &threads) == Decision::kRun);
  CallDemand slow{4, 2.0};
  slow.arrived = 1;  // asked at 20, after 19 s of transfer
  CallDemand quick{5, 1.0};
  CHECK(b.Offer(quick, 19, &threads) == Decision::kQueue);
  CHECK(b.Offer(slow, 20, &threads) == Decision::kQueue);
  b.Release(1);
  CHECK(NextId(b, 21) == 4u);  // 1 + 2 < 19 + 1
}

TEST_CASE("admission_precheck_refuses_what_the_slot_request_would", "[admission]") {
  Admission a(Slots(1, 2));
  int threads = 0;
  CHECK(a.Precheck(CallDemand{1}, 0, 0) == Decision::kRun);  // a free slot
  CHECK(a.Offer(CallDemand{1}, 0, &threads) == Decision::kRun);
  CHECK(a.Precheck(CallDemand{2}, 0, 0) == Decision::kQueue);
  // Calls already arriving will wait too: with two of them the queue is full.
  CHECK(a.Precheck(CallDemand{2}, 2, 0) == Decision::kReject);
  CallDemand alice{3};
  alice.user = "alice";
  alice.user_queued = 1;
  CHECK(a.Precheck(alice, 0, 0) == Decision::kQueue);
  CHECK(a.Precheck(alice, 1, 1) == Decision::kUserQueueFull);  // her arriving call
  CHECK(a.Offer(alice, 0, &threads) == Decision::kQueue);
  CHECK(a.Precheck(alice, 0, 0) == Decision::kUserQueueFull);
}

// --- Brief calls (work-conserving admission) ---

namespace {

CallDemand Brief(uint64_t id) {
  CallDemand d{id};
  d.brief = true;
  return d;
}

}  // namespace

TEST_CASE("admission_brief_is_a_prediction_or_a_measured_history_under_the_quantum",
          "[admission]") {
  using ninf::server::IsBrief;
  using ninf::server::kBriefHistory;
  using ninf::server::kBriefSeconds;
  CHECK(IsBrief(kBriefSeconds / 2, -1, 0));            // predicted: history not needed
  CHECK_FALSE(IsBrief(kBriefSeconds * 2, 1e-6, 100));  // the prediction wins over history
  CHECK(IsBrief(0, 1e-5, kBriefHistory));              // no prediction: the history says
  CHECK_FALSE(IsBrief(0, 1e-5, kBriefHistory - 1));    // too few calls to say
  CHECK_FALSE(IsBrief(0, kBriefSeconds, 100));         // at the quantum: not brief
  CHECK_FALSE(IsBrief(0, -1, 100));                    // nothing measured
}

TEST_CASE("admission_brief_calls_need_a_slot_but_no_core", "[admission]") {
  // 2 cores, 8 slots (the peers benchmark's shape): two gated calls hold
  // both cores; a third gated call waits for a core, brief calls run.
  SchedulerConfig c = Adaptive(2);
  c.slots = 8;
  Admission a(c);
  int threads = 0, cores = 0;
  CallDemand one{1};
  one.max_threads = 1;
  CallDemand two{2};
  two.max_threads = 1;
  REQUIRE(a.Offer(one, 0, &threads, &cores) == Decision::kRun);
  CHECK(cores == threads);
  REQUIRE(a.Offer(two, 0, &threads, &cores) == Decision::kRun);
  CHECK(a.threads_held() == 2);
  CHECK(OfferAt(a, 3) == Decision::kQueue);  // gated: no core free
  for (uint64_t id = 10; id < 15; ++id) {
    REQUIRE(a.Offer(Brief(id), 0, &threads, &cores) == Decision::kRun);
    CHECK(threads == 1);
    CHECK(cores == 0);
  }
  CHECK(a.running() == 7);
  CHECK(a.brief_running() == 5);
  CHECK(a.threads_held() == 2);  // the brief calls hold no core
  // The last slot goes to a brief call too; then slots, not cores, are short.
  REQUIRE(a.Offer(Brief(15), 0, &threads, &cores) == Decision::kRun);
  CHECK(a.Offer(Brief(16), 0, &threads, &cores) == Decision::kQueue);
  // A brief call's end frees its slot only: the queued brief call goes,
  // the gated one (first in line) still has no core.
  a.Release(0);
  std::optional<Grant> g = a.Next(0);
  REQUIRE(g);
  CHECK(g->id == 16);
  CHECK(g->cores == 0);
  CHECK_FALSE(a.Next(0));
  // A gated call's end frees a core: the waiting gated call gets it.
  a.Release(1);
  g = a.Next(0);
  REQUIRE(g);
  CHECK(g->id == 3);
  CHECK(g->cores == g->threads);
  CHECK(a.threads_held() == 2);
}

TEST_CASE("admission_brief_calls_are_no_part_of_the_adaptive_demand", "[admission]") {
  SchedulerConfig c = Adaptive(4);
  c.slots = 16;
  Admission a(c);
  int threads = 0, cores = 0;
  for (uint64_t id = 1; id <= 10; ++id)
    REQUIRE(a.Offer(Brief(id), 0, &threads, &cores) == Decision::kRun);
  // A routine arriving beside ten brief calls gets every core, as alone.
  REQUIRE(OfferAt(a, 20, 0, &threads) == Decision::kRun);
  CHECK(threads == 4);
}

TEST_CASE("admission_brief_calls_with_ranks_hold_their_cores", "[admission]") {
  Admission a(Adaptive(2));
  CallDemand mpi = Brief(1);
  mpi.ranks = 2;
  int threads = 0, cores = 0;
  REQUIRE(a.Offer(mpi, 0, &threads, &cores) == Decision::kRun);
  CHECK(cores == 2);  // an MPI job's ranks are never brief
  CHECK(a.brief_running() == 0);
}

TEST_CASE("admission_a_brief_newcomer_waits_behind_a_brief_call_that_waits", "[admission]") {
  SchedulerConfig c = Adaptive(1);
  c.slots = 2;
  Admission a(c);
  int threads = 0, cores = 0;
  REQUIRE(a.Offer(Brief(1), 0, &threads, &cores) == Decision::kRun);
  REQUIRE(a.Offer(Brief(2), 0, &threads, &cores) == Decision::kRun);
  CHECK(a.Offer(Brief(3), 0, &threads, &cores) == Decision::kQueue);  // no slot
  a.Release(0);
  // Before Next() hands the slot on, a newcomer does not take it from 3.
  CHECK(a.Offer(Brief(4), 0, &threads, &cores) == Decision::kQueue);
  CHECK(NextId(a) == 3u);
  a.Withdraw(4);
  a.Release(0);
  a.Release(0);
  CHECK(a.running() == 0);
  CHECK(a.brief_running() == 0);
}

TEST_CASE("admission_a_brief_grant_outgrown_ends_with_its_call", "[admission]") {
  using ninf::server::kBriefSeconds;
  using ninf::server::OutgrewBrief;
  CHECK(OutgrewBrief(0, kBriefSeconds));  // granted brief, computed a quantum
  CHECK(OutgrewBrief(0, 2.5));
  CHECK_FALSE(OutgrewBrief(0, kBriefSeconds / 10));
  CHECK_FALSE(OutgrewBrief(2, 2.5));  // it held cores: nothing outgrown
}
