// The job states (server/job_state.h): every question the daemon asks of a
// state, answered for every state, and the transition table Job::SetState
// checks. A new state, or a changed answer, must change this file too.
#include "server/job_state.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <utility>

using namespace ninf::server;
using S = JobState;

namespace {

// The states for which `pred` holds.
template <typename Pred>
std::set<S> Where(Pred pred) {
  std::set<S> out;
  for (S s : kJobStates)
    if (pred(s)) out.insert(s);
  return out;
}

}  // namespace

TEST_CASE("job_state_every_state_is_listed_once_with_its_own_name", "[job_state]") {
  std::set<std::string> names;
  for (S s : kJobStates) names.insert(JobStateName(s));
  CHECK(names.size() == 14);
  CHECK(std::string(JobStateName(S::kLeased)) == "leased");
  CHECK(std::string(JobStateName(S::kHeld)) == "held");
  CHECK(std::string(JobStateName(S::kArrivalQueued)) == "arrival_queued");
  CHECK(std::string(JobStateName(S::kNew)) == "new");
  CHECK(std::string(JobStateName(S::kEnded)) == "ended");
}

TEST_CASE("job_state_predicates_answer_for_every_state", "[job_state]") {
  // A handle that keeps its slot between calls holds it (slot_lease.h).
  CHECK(Where(HoldsSlot) == std::set<S>{S::kStarting, S::kReceiving, S::kComputing, S::kReplying,
                                        S::kDone, S::kLeased});
  // Admitted after arrival, a call holds no slot until it is granted one
  // with its arguments in memory (kHeld -> kComputing).
  CHECK(Where(CallOpen) ==
        std::set<S>{S::kReceiving, S::kComputing, S::kReplying, S::kArriving, S::kHeld});
  CHECK(Where(InQueue) == std::set<S>{S::kQueued, S::kHeld});
  CHECK(Where(CountsInLoad) == std::set<S>{S::kQueued, S::kStarting, S::kReceiving, S::kComputing,
                                           S::kReplying, S::kDone, S::kArrivalQueued,
                                           S::kHandingOver, S::kArriving, S::kHeld});
  CHECK(Where(AwaitsArguments) == std::set<S>{S::kNew});
  CHECK(Where(AwaitsHandoff) == std::set<S>{S::kStarting, S::kHandingOver});
  CHECK(Where(AwaitsArrivalRoom) == std::set<S>{S::kArrivalQueued});
  CHECK(Where(ArrivedWithoutSlot) == std::set<S>{S::kArriving, S::kHeld});
  CHECK(Where(KillRefuses) ==
        std::set<S>{S::kNew, S::kStarting, S::kArrivalQueued, S::kHandingOver});
  CHECK(Where(ReadingArguments) == std::set<S>{S::kReceiving, S::kArriving});
  CHECK(Where(RoutineRuns) == std::set<S>{S::kComputing});
  CHECK(Where(WritingResult) == std::set<S>{S::kReplying});
  CHECK(Where(MovesCallData) == std::set<S>{S::kReceiving, S::kReplying, S::kArriving});
  CHECK(Where(HangupCancels) == std::set<S>{S::kReceiving, S::kComputing, S::kArriving, S::kHeld});
  CHECK(Where(IdleBetweenCalls) == std::set<S>{S::kIdle});
  CHECK(Where(KeepsSlot) == std::set<S>{S::kLeased});
  CHECK(Where(OneShotDone) == std::set<S>{S::kDone});
}

TEST_CASE("job_state_heartbeats_come_from_ninfd_before_the_handoff_and_from_the_routine",
          "[job_state]") {
  auto writer = [](HeartbeatWriter w) {
    return Where([w](S s) { return HeartbeatWriterIn(s) == w; });
  };
  CHECK(writer(HeartbeatWriter::kDaemon) ==
        std::set<S>{S::kQueued, S::kStarting, S::kArrivalQueued, S::kHandingOver});
  // A call holding its arguments waits for its slot in the executable,
  // which beats (and answers CTL_PROBE) meanwhile.
  CHECK(writer(HeartbeatWriter::kExecutable) == std::set<S>{S::kComputing, S::kHeld});
  CHECK(writer(HeartbeatWriter::kNone) == std::set<S>{S::kNew, S::kReceiving, S::kReplying,
                                                      S::kIdle, S::kDone, S::kEnded, S::kArriving,
                                                      S::kLeased});
}

// OnHangup (the client hung up: a socket error or urgent data on a parked
// connection) and OnClosed (ninfd closed the connection: a failed write or
// poll) ask the same question: before the hand-off the connection is the
// only way to the client, so losing it either way cancels the call. Once the
// call was handed over neither ends the job: a hang-up is then
// HangupCancels' business (the executable is killed and its exit ends the
// job), and a closed connection leaves the executable its own copy.
TEST_CASE("job_state_losing_the_client_before_the_handoff_cancels_however_it_is_lost",
          "[job_state]") {
  CHECK(Where(ClientLossEndsCall) ==
        std::set<S>{S::kNew, S::kQueued, S::kStarting, S::kArrivalQueued, S::kHandingOver});
  for (S s : kJobStates) {
    INFO(JobStateName(s));
    CHECK_FALSE((ClientLossEndsCall(s) && HangupCancels(s)));
    CHECK_FALSE((ClientLossEndsCall(s) && CallOpen(s)));
  }
}

TEST_CASE("job_state_transition_table", "[job_state]") {
  const std::set<std::pair<S, S>> allowed = {
      {S::kNew, S::kQueued},
      {S::kNew, S::kStarting},
      {S::kQueued, S::kStarting},
      {S::kQueued, S::kReceiving},  // a handle's next call
      {S::kQueued, S::kIdle},       // no slot for it
      {S::kStarting, S::kReceiving},
      {S::kReceiving, S::kComputing},
      {S::kReceiving, S::kReplying},
      {S::kReceiving, S::kIdle},
      {S::kReceiving, S::kDone},
      {S::kComputing, S::kReplying},
      {S::kComputing, S::kIdle},
      {S::kComputing, S::kDone},
      {S::kReplying, S::kReplying},
      {S::kReplying, S::kIdle},
      {S::kReplying, S::kDone},
      {S::kIdle, S::kQueued},
      {S::kIdle, S::kIdle},
      // A handle keeping its slot between calls (slot_lease.h).
      {S::kIdle, S::kLeased},
      {S::kLeased, S::kLeased},
      {S::kLeased, S::kIdle},
      // Admission after arrival.
      {S::kNew, S::kArrivalQueued},
      {S::kNew, S::kHandingOver},
      {S::kArrivalQueued, S::kHandingOver},
      {S::kHandingOver, S::kArriving},
      {S::kArriving, S::kHeld},
      {S::kArriving, S::kIdle},
      {S::kArriving, S::kDone},
      {S::kHeld, S::kComputing},
      {S::kHeld, S::kIdle},
      {S::kHeld, S::kDone},
      {S::kIdle, S::kHeld},
      {S::kIdle, S::kArriving},
  };
  for (S from : kJobStates)
    for (S to : kJobStates) {
      INFO(JobStateName(from) << " -> " << JobStateName(to));
      const bool expected = to == S::kEnded ? from != S::kEnded : allowed.count({from, to}) > 0;
      CHECK(MayMove(from, to) == expected);
    }
  // Nothing follows the end, and a done one-shot call only ends.
  CHECK(Where([](S to) { return MayMove(S::kEnded, to); }).empty());
  CHECK(Where([](S to) { return MayMove(S::kDone, to); }) == std::set<S>{S::kEnded});
}
