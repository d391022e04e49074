// The decisions of ninfd's policy unit (server/job_state.h, watch_policy.h,
// daemon/connection_policy.h (ninf-meta's too), warm_policy.h, reuse_policy.h, job_ending.h,
// blas_core.h) that are not admission or restarts: which job states hold a slot, when a hang-up
// cancels, when warm executables are started, what a job's end means for its client and the
// statistics, and which OpenBLAS kernels the executables get. No sockets; one short-lived child
// process (the OpenBLAS check).
#include <catch2/catch.hpp>

#include "daemon/connection_policy.h"
#include "daemon/exposure.h"
#include "server/blas_core.h"
#include "server/job_ending.h"
#include "server/job_state.h"
#include "server/reuse_policy.h"
#include "server/warm_policy.h"
#include "server/watch_policy.h"

using namespace ninf::server;
using ninf::daemon::CheckExposure;
using ninf::daemon::ConnectionFacts;
using ninf::daemon::ConnectionToReplace;
using ninf::daemon::IsLoopbackAddress;
using ninf::daemon::kNewcomerGraceMs;
using ninf::daemon::ReplacementOrder;

namespace {

constexpr JobState kAllStates[] = {
    JobState::kNew,       JobState::kQueued,    JobState::kStarting,
    JobState::kReceiving, JobState::kComputing, JobState::kReplying,
    JobState::kIdle,      JobState::kDone,      JobState::kEnded,
};

JobFacts Facts(JobState state, bool persistent = false, KillReason kill = KillReason::kNone) {
  JobFacts f;
  f.state = state;
  f.persistent = persistent;
  f.kill_reason = kill;
  f.function = "dgesv";
  f.exit_description = "signal 9";
  f.queued = 7;
  return f;
}

}  // namespace

TEST_CASE("policy_slots_are_held_from_admission_to_the_end_of_a_one_shot_call", "[policy]") {
  for (JobState s : kAllStates) {
    INFO(JobStateName(s));
    const bool expected = s == JobState::kStarting || s == JobState::kReceiving ||
                          s == JobState::kComputing || s == JobState::kReplying ||
                          s == JobState::kDone;
    CHECK(HoldsSlot(s) == expected);
  }
  // An idle persistent executable waits for its client without a slot.
  CHECK_FALSE(HoldsSlot(JobState::kIdle));
}

TEST_CASE("policy_a_hangup_cancels_only_before_the_reply", "[policy]") {
  CHECK(HangupCancels(JobState::kReceiving));
  CHECK(HangupCancels(JobState::kComputing));
  CHECK_FALSE(HangupCancels(JobState::kReplying));  // the client leaves with its result
  CHECK_FALSE(HangupCancels(JobState::kIdle));
  CHECK_FALSE(HangupCancels(JobState::kDone));
  for (JobState s : kAllStates)
    CHECK(CallOpen(s) == (HangupCancels(s) || s == JobState::kReplying));
}

TEST_CASE("policy_state_names_are_distinct", "[policy]") {
  for (JobState a : kAllStates)
    for (JobState b : kAllStates)
      if (a != b) CHECK(std::string(JobStateName(a)) != JobStateName(b));
}

TEST_CASE("policy_heartbeat_period_has_a_floor_and_the_liveness_ceiling", "[policy]") {
  CHECK(HeartbeatPeriodMs(0, 5000) == 5000);  // liveness is on even when not asked for
  CHECK(HeartbeatPeriodMs(1, 5000) == kMinHeartbeatMs);
  CHECK(HeartbeatPeriodMs(250, 5000) == 250);
  CHECK(HeartbeatPeriodMs(60000, 5000) == 5000);  // never slower than the liveness period
}

TEST_CASE("policy_watch_holds_each_state_to_its_deadline", "[policy]") {
  WatchLimits limits{.transfer_ms = 1000, .wall_ms = 5000, .handle_idle_ms = 3000};
  auto verdict = [&](JobState st, int64_t in_call, int64_t since_progress, int64_t idle) {
    return Watch(WatchFacts{st, in_call, since_progress, idle}, limits);
  };
  // Transfers are held to progress, a computation is not.
  CHECK(verdict(JobState::kReceiving, 1500, 999, 0) == Verdict::kKeep);
  CHECK(verdict(JobState::kReceiving, 1500, 1001, 0) == Verdict::kStalled);
  CHECK(verdict(JobState::kReplying, 1500, 1001, 0) == Verdict::kStalled);
  CHECK(verdict(JobState::kComputing, 4000, 4000, 0) == Verdict::kKeep);
  // The wall-clock budget covers the whole call, transfers included.
  CHECK(verdict(JobState::kComputing, 5001, 0, 0) == Verdict::kWallLimit);
  CHECK(verdict(JobState::kReceiving, 5001, 0, 0) == Verdict::kWallLimit);
  limits.wall_ms = 0;  // no budget
  CHECK(verdict(JobState::kComputing, 1 << 30, 0, 0) == Verdict::kKeep);
  // Idle handles expire; queued calls and starting ones are not watched here.
  CHECK(verdict(JobState::kIdle, 0, 0, 3001) == Verdict::kIdleExpired);
  CHECK(verdict(JobState::kIdle, 0, 0, 2999) == Verdict::kKeep);
  CHECK(verdict(JobState::kQueued, 0, 1 << 30, 0) == Verdict::kKeep);
  // A handle's later call reading its arguments is a transfer; one waiting
  // for room under the arrival bounds reads nothing yet, and is kept.
  limits.wall_ms = 5000;
  CHECK(verdict(JobState::kArriving, 1500, 1001, 0) == Verdict::kStalled);
  CHECK(Watch(WatchFacts{JobState::kArriving, 1 << 30, 1 << 30, 0, true}, limits) ==
        Verdict::kKeep);
}

TEST_CASE("policy_daemon_beats_only_for_a_stopped_executable_of_a_quiet_client", "[policy]") {
  const BeatFacts owes{JobState::kComputing, true, 1000, true, false};
  CHECK(DaemonBeatsForExecutable(owes, 1000));
  BeatFacts f = owes;
  f.client_quiet_ms = 999;  // the executable still has time to answer
  CHECK_FALSE(DaemonBeatsForExecutable(f, 1000));
  f = owes;
  f.client_quiet_ms = -1;  // the client did not shut its side
  CHECK_FALSE(DaemonBeatsForExecutable(f, 1000));
  f = owes;
  f.state = JobState::kReceiving;  // stopped while reading the arguments: no write in flight
  CHECK(DaemonBeatsForExecutable(f, 1000));
  f = owes;
  f.executable_stopped = false;  // a running executable writes its own beats
  CHECK_FALSE(DaemonBeatsForExecutable(f, 1000));
  f = owes;
  f.output_queued = true;  // the stream may be inside a frame
  CHECK_FALSE(DaemonBeatsForExecutable(f, 1000));
  f = owes;
  f.peer_shut_write = false;  // nothing to learn
  CHECK_FALSE(DaemonBeatsForExecutable(f, 1000));
  for (JobState s : {JobState::kReplying, JobState::kQueued, JobState::kIdle, JobState::kDone}) {
    f = owes;
    f.state = s;  // the executable writes its result, or ninfd its own beats
    CHECK_FALSE(DaemonBeatsForExecutable(f, 1000));
  }
}

TEST_CASE("policy_idle_handles_beyond_the_budget_stop_longest_idle_first", "[policy]") {
  std::vector<IdleHandle> idle = {{1, 100, 10}, {2, 900, 10}, {3, 500, 10}};
  CHECK(IdleHandlesToStop(idle, 3, 1000).empty());
  CHECK(IdleHandlesToStop(idle, 2, 1000) == std::vector<uint64_t>{2});
  CHECK(IdleHandlesToStop(idle, 1, 1000) == std::vector<uint64_t>{2, 3});
  // Memory: 30 bytes held, 15 allowed: the two longest idle go.
  CHECK(IdleHandlesToStop(idle, 10, 15) == std::vector<uint64_t>{2, 3});
  CHECK(IdleHandlesToStop(idle, 0, 1000).size() == 3);
}

namespace {

using Phase = ConnectionFacts::Phase;

ConnectionFacts Conn(uint64_t id, Phase phase, uint64_t requests, bool started, bool unread,
                     uint64_t age_ms, bool gone = false) {
  return {.id = id,
          .phase = phase,
          .requests = requests,
          .started = started,
          .input_waiting = unread,
          .peer_gone = gone,
          .age_ms = age_ms,
          .opened_seq = id};
}

}  // namespace

TEST_CASE("policy_a_new_connection_replaces_the_oldest_stalled_sender", "[policy]") {
  const uint64_t old = kNewcomerGraceMs + 1;
  std::vector<ConnectionFacts> open = {
      Conn(1, Phase::kReading, 1, false, false, old),  // a working client between requests
      Conn(2, Phase::kBusy, 1, false, false, old),     // a call is parked (a handle)
      Conn(3, Phase::kReading, 0, true, false, 5),     // began a request and stalled
      Conn(4, Phase::kReading, 0, false, false, old),  // an idle socket
  };
  CHECK(ConnectionToReplace(open) == 3u);
  open.erase(open.begin() + 2);
  CHECK(ConnectionToReplace(open) == 4u);
  open.pop_back();
  CHECK_FALSE(ConnectionToReplace(open).has_value());  // nobody to replace: refuse
}

TEST_CASE("policy_a_connection_whose_request_arrived_is_never_replaced", "[policy]") {
  const uint64_t old = kNewcomerGraceMs * 10;
  // Its request waits unread in the socket (accepted, not read yet): it
  // has arrived, whatever its age or stage.
  CHECK_FALSE(ConnectionToReplace({Conn(1, Phase::kReading, 0, false, true, old)}).has_value());
  CHECK_FALSE(ConnectionToReplace({Conn(1, Phase::kReading, 0, true, true, old)}).has_value());
  // Nothing yet, but only just accepted: its client may not have had the
  // chance to send.
  CHECK_FALSE(ConnectionToReplace({Conn(1, Phase::kReading, 0, false, false, 0)}).has_value());
  CHECK_FALSE(ConnectionToReplace({Conn(1, Phase::kReading, 0, false, false, kNewcomerGraceMs - 1)})
                  .has_value());
  CHECK(ConnectionToReplace({Conn(1, Phase::kReading, 0, false, false, kNewcomerGraceMs)}) == 1u);
  // A complete request, a call held, a reply being written: never.
  CHECK_FALSE(ConnectionToReplace({Conn(1, Phase::kReading, 2, false, false, old)}).has_value());
  CHECK_FALSE(ConnectionToReplace({Conn(1, Phase::kBusy, 0, false, false, old)}).has_value());
}

TEST_CASE("policy_an_answered_connection_goes_before_a_stalled_sender", "[policy]") {
  std::vector<ConnectionFacts> open = {
      Conn(1, Phase::kReading, 0, true, false, 5),    // stalled, and the oldest
      Conn(2, Phase::kDraining, 1, false, true, 5),   // answered, but its peer sent more
      Conn(3, Phase::kDraining, 1, false, false, 5),  // answered: only its close is awaited
  };
  CHECK(ConnectionToReplace(open) == 3u);
  open.pop_back();
  CHECK(ConnectionToReplace(open) == 1u);
  // A client that closed after its last reply, its close not yet read: as
  // good as answered. A call whose client left is the scheduler's business.
  open.push_back(Conn(4, Phase::kReading, 3, false, false, 5, true));
  open.push_back(Conn(5, Phase::kBusy, 1, false, false, 5, true));
  CHECK(ConnectionToReplace(open) == 4u);
  // Sockets are looked at in this order, and the parked call never.
  CHECK(ReplacementOrder(open) == std::vector<uint64_t>{2, 4, 1});
}

TEST_CASE("policy_warm_replacements_wait_while_every_core_is_busy", "[policy]") {
  // A warm executable is still idle: nothing to do.
  CHECK(WarmAfterHandoff(true, false, 1, 2, 2) == WarmAction::kNothing);
  // The last one was taken (or none was there) and a core is free: start now.
  CHECK(WarmAfterHandoff(true, false, 0, 1, 2) == WarmAction::kReplenishNow);
  CHECK(WarmAfterHandoff(false, false, 3, 1, 2) == WarmAction::kReplenishNow);
  // Every core is held by running calls (two one-thread calls, or one with
  // two threads): only remember the function.
  CHECK(WarmAfterHandoff(true, false, 0, 2, 2) == WarmAction::kArm);
  CHECK(WarmAfterHandoff(false, false, 0, 2, 2) == WarmAction::kArm);
  // The executable comes back after the call: nothing is started for it.
  CHECK(WarmAfterHandoff(true, true, 0, 1, 2) == WarmAction::kArm);
  CHECK(WarmAfterHandoff(false, true, 0, 0, 2) == WarmAction::kArm);
}

TEST_CASE("policy_reuse_until_max_calls_or_age", "[policy]") {
  ReuseFacts f;
  f.max_calls = 3;
  f.max_age_ms = 1000;
  f.served = 1;
  f.age_ms = 10;
  CHECK(MayReuse(f));
  f.served = 2;
  CHECK(MayReuse(f));
  f.served = 3;  // the third call is its last
  CHECK_FALSE(MayReuse(f));
  f.served = 1;
  f.age_ms = 1000;
  CHECK_FALSE(MayReuse(f));
  f.max_age_ms = 0;  // no age limit
  CHECK(MayReuse(f));
  ReuseFacts once = f;
  once.max_calls = 1;  // executable_max_calls = 1: one call per process
  CHECK_FALSE(MayReuse(once));
  ReuseFacts stateful = f;
  stateful.function_allows = false;  // IDL: Reuse "no"
  CHECK_FALSE(MayReuse(stateful));
  ReuseFacts handle = f;
  handle.persistent = true;
  CHECK_FALSE(MayReuse(handle));
  ReuseFacts stopping = f;
  stopping.stopping = true;
  CHECK_FALSE(MayReuse(stopping));
}

TEST_CASE("policy_refusals_are_counted_and_told", "[policy]") {
  Ending full = DescribeEnding(Facts(JobState::kNew), EndReason::kQueueFull, {});
  CHECK(full.counted);
  CHECK(full.outcome == ninf::server::CallOutcome::kRejected);
  CHECK(full.tell.code() == NINF_ERR_SERVER);
  CHECK(full.tell.message().find("7 calls already wait") != std::string::npos);

  Ending refused = DescribeEnding(Facts(JobState::kQueued), EndReason::kRefused, {});
  CHECK(refused.outcome == ninf::server::CallOutcome::kRejected);
  CHECK(refused.tell.code() == NINF_ERR_SHUTTING_DOWN);

  Ending gone = DescribeEnding(Facts(JobState::kQueued), EndReason::kHangup, {});
  CHECK(gone.counted);
  CHECK(gone.outcome == ninf::server::CallOutcome::kCancelled);
  CHECK(gone.tell.ok());  // nobody to tell

  ninf::Status why(NINF_ERR_EXECUTABLE, "cannot start");
  Ending spawn = DescribeEnding(Facts(JobState::kStarting), EndReason::kSpawnFailed, why);
  CHECK(spawn.outcome == ninf::server::CallOutcome::kFailed);
  CHECK(spawn.tell.message() == "cannot start");

  ninf::Status late(NINF_ERR_TIMEOUT, "the call's arguments did not begin within 10 s");
  Ending no_args = DescribeEnding(Facts(JobState::kNew), EndReason::kNoArguments, late);
  CHECK(no_args.counted);
  CHECK(no_args.outcome == ninf::server::CallOutcome::kFailed);
  CHECK(no_args.tell.code() == NINF_ERR_TIMEOUT);
}

TEST_CASE("policy_an_executable_dying_mid_call_is_a_failure_told_to_the_client", "[policy]") {
  Ending e = DescribeEnding(Facts(JobState::kComputing), EndReason::kExited, {});
  CHECK(e.counted);
  CHECK(e.outcome == ninf::server::CallOutcome::kFailed);
  CHECK(e.tell.code() == NINF_ERR_EXECUTABLE);
  CHECK(e.tell.message() == "executable for 'dgesv' died: signal 9");

  // Once it replies, no frame can be injected: the failure is silent.
  Ending replying = DescribeEnding(Facts(JobState::kReplying), EndReason::kExited, {});
  CHECK(replying.outcome == ninf::server::CallOutcome::kFailed);
  CHECK(replying.tell.ok());

  Ending shutdown = DescribeEnding(Facts(JobState::kReceiving, false, KillReason::kShutdown),
                                   EndReason::kExited, {});
  CHECK(shutdown.tell.code() == NINF_ERR_SHUTTING_DOWN);

  Ending cancelled = DescribeEnding(Facts(JobState::kComputing, false, KillReason::kClientGone),
                                    EndReason::kExited, {});
  CHECK(cancelled.outcome == ninf::server::CallOutcome::kCancelled);
  CHECK(cancelled.tell.ok());
}

TEST_CASE("policy_an_exit_between_calls_is_not_counted", "[policy]") {
  Ending done = DescribeEnding(Facts(JobState::kDone), EndReason::kExited, {});
  CHECK_FALSE(done.counted);  // counted at CALL_DONE already
  CHECK(done.tell.ok());
  // Nor is a reusable executable's going back to the pool.
  Ending released = DescribeEnding(Facts(JobState::kDone), EndReason::kReleased, {});
  CHECK_FALSE(released.counted);
  CHECK(released.tell.ok());

  Ending idle = DescribeEnding(Facts(JobState::kIdle, true), EndReason::kExited, {});
  CHECK_FALSE(idle.counted);
  CHECK(idle.tell.ok());

  // An idle handle's executable stopped by the shutdown: its client is told.
  Ending stopped =
      DescribeEnding(Facts(JobState::kIdle, true, KillReason::kShutdown), EndReason::kExited, {});
  CHECK_FALSE(stopped.counted);
  CHECK(stopped.tell.code() == NINF_ERR_SHUTTING_DOWN);
}

TEST_CASE("policy_exposed_listeners_need_a_key", "[policy]") {
  for (const char *local : {"127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"})
    CHECK(IsLoopbackAddress(local));
  for (const char *exposed : {"0.0.0.0", "::", "10.0.0.7", "192.168.1.1", "fe80::1", "myhost", ""})
    CHECK_FALSE(IsLoopbackAddress(exposed));
  CHECK(CheckExposure({.listen = "127.0.0.1", .tls = false}).ok());
  CHECK(CheckExposure({.listen = "0.0.0.0", .key = true, .tls = true}).ok());
  CHECK(CheckExposure({.listen = "0.0.0.0", .tls = false, .insecure = true}).ok());
  ninf::Status st = CheckExposure({.listen = "0.0.0.0", .tls = true});
  CHECK(st.code() == NINF_ERR_CONFIG);
  CHECK_THAT(st.message(), Catch::Contains("key_file") && Catch::Contains("--insecure"));
}

// Issue 43: beyond loopback, keys without TLS is a choice to make on purpose.
TEST_CASE("policy_exposed_listeners_need_tls", "[policy]") {
  ninf::Status st = CheckExposure({.listen = "10.0.0.7", .key = true, .tls = false});
  CHECK(st.code() == NINF_ERR_CONFIG);
  CHECK_THAT(st.message(), Catch::Contains("without TLS") &&
                               Catch::Contains("scripts/site_ca.sh") &&
                               Catch::Contains("--allow-plaintext"));
  CHECK(CheckExposure({.listen = "10.0.0.7", .key = true, .tls = false, .plaintext = true}).ok());
  CHECK(CheckExposure({.listen = "::1", .key = true, .tls = false}).ok());
  // Without a key the key is what is missing first (and insecure covers both).
  CHECK_THAT(CheckExposure({.listen = "10.0.0.7", .tls = false, .plaintext = true}).message(),
             Catch::Contains("without authentication"));
}

TEST_CASE("openblas_core_raised_only_from_a_fallback", "[policy]") {
  const CpuIsa avx512{true, true, true}, avx2{true, true, false}, avx{true, false, false}, sse{};
  // Debian 12's OpenBLAS on a CPU it does not know (Intel model 207).
  CHECK(PreferredOpenblasCore("Prescott", avx512) == "SkylakeX");
  CHECK(PreferredOpenblasCore("Prescott", avx2) == "Haswell");
  CHECK(PreferredOpenblasCore("Nehalem", avx) == "Sandybridge");
  CHECK(PreferredOpenblasCore("Sandybridge", avx2) == "Haswell");
  // Already as good, or the CPU can do no better: the library's choice.
  CHECK(PreferredOpenblasCore("SkylakeX", avx512).empty());
  CHECK(PreferredOpenblasCore("SapphireRapids", avx512).empty());
  CHECK(PreferredOpenblasCore("Zen", avx2).empty());
  CHECK(PreferredOpenblasCore("Prescott", sse).empty());
  // A name this table does not know is a newer library's: left alone.
  CHECK(PreferredOpenblasCore("Zen5", avx512).empty());
  CHECK(PreferredOpenblasCore("", avx512).empty());
}

TEST_CASE("openblas_core_detected_in_a_child", "[policy]") {
  // The project links OpenBLAS: the library is there, and names its kernel.
  const std::string core = DetectedOpenblasCore();
  CHECK_FALSE(core.empty());
  CHECK(core.size() < 64);
  const std::string better = PreferredOpenblasCore(core, HostIsa());
  WARN("OpenBLAS picks " << core << " here; executables get " << (better.empty() ? core : better));
}

TEST_CASE("policy_an_idle_handle_stopped_as_its_call_came_tells_expired", "[policy]") {
  // The idle-handle budget stopped the executable just as the handle's next
  // call reached it: before the routine the call may be sent again (the
  // handle does so on NINF_ERR_EXPIRED); once the routine ran it may not.
  for (JobState before : {JobState::kReceiving, JobState::kArriving, JobState::kHeld}) {
    Ending e =
        DescribeEnding(Facts(before, true, KillReason::kIdleExpired), EndReason::kExited, {});
    CHECK(e.counted);
    CHECK(e.outcome == ninf::server::CallOutcome::kCancelled);
    CHECK(e.tell.code() == NINF_ERR_EXPIRED);
  }
  Ending ran = DescribeEnding(Facts(JobState::kComputing, true, KillReason::kIdleExpired),
                              EndReason::kExited, {});
  CHECK(ran.outcome == ninf::server::CallOutcome::kFailed);
  CHECK(ran.tell.code() == NINF_ERR_EXECUTABLE);
  // Idle, as before: nothing to count, the next call reads EXPIRED.
  Ending idle = DescribeEnding(Facts(JobState::kIdle, true, KillReason::kIdleExpired),
                               EndReason::kExited, {});
  CHECK_FALSE(idle.counted);
  CHECK(idle.tell.code() == NINF_ERR_EXPIRED);
  // A one-shot call is never an idle handle's.
  Ending oneshot = DescribeEnding(Facts(JobState::kReceiving, false, KillReason::kIdleExpired),
                                  EndReason::kExited, {});
  CHECK(oneshot.tell.code() == NINF_ERR_EXECUTABLE);
}
