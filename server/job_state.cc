#include "server/job_state.h"

namespace ninf::server {
namespace {

// A set of states, one bit each.
using StateSet = uint32_t;

constexpr StateSet Bit(JobState s) { return StateSet{1} << static_cast<unsigned>(s); }

template <typename... States>
constexpr StateSet Of(States... states) {
  return (StateSet{0} | ... | Bit(states));
}

// The transition table: the states that may follow `from`, kEnded aside
// (every state but kEnded itself may end).
StateSet Next(JobState from) {
  using S = JobState;
  switch (from) {
    case S::kNew:
      return Of(S::kQueued, S::kStarting, S::kArrivalQueued, S::kHandingOver);
    case S::kArrivalQueued:
      return Of(S::kHandingOver);
    case S::kHandingOver:
      return Of(S::kArriving);
    case S::kArriving:  // CALL_DONE may come straight from here when the call failed
      return Of(S::kHeld, S::kIdle, S::kDone);
    case S::kHeld:  // admitted; or refused (a handle goes idle, a one-shot call fails)
      return Of(S::kComputing, S::kIdle, S::kDone);
    case S::kQueued:  // a persistent executable's next call resumes, or is refused
      return Of(S::kStarting, S::kReceiving, S::kIdle);
    case S::kStarting:
      return Of(S::kReceiving);
    case S::kReceiving:  // CALL_DONE may come straight from here when the call failed
      return Of(S::kComputing, S::kReplying, S::kIdle, S::kDone);
    case S::kComputing:
      return Of(S::kReplying, S::kIdle, S::kDone);
    case S::kReplying:  // a repeated CTL_REPLYING changes nothing
      return Of(S::kReplying, S::kIdle, S::kDone);
    case S::kIdle:  // RefuseSlot may answer an idle executable too
      return Of(S::kQueued, S::kIdle, S::kHeld, S::kArriving, S::kLeased);
    case S::kLeased:  // a call done on the kept slot; the lease taken or given back
      return Of(S::kLeased, S::kIdle);
    case S::kDone:
      return Of();
    case S::kEnded:
      return Of();
  }
  return Of();
}

}  // namespace

const char *JobStateName(JobState state) {
  switch (state) {
    case JobState::kNew:
      return "new";
    case JobState::kQueued:
      return "queued";
    case JobState::kStarting:
      return "starting";
    case JobState::kReceiving:
      return "receiving";
    case JobState::kComputing:
      return "computing";
    case JobState::kReplying:
      return "replying";
    case JobState::kIdle:
      return "idle";
    case JobState::kDone:
      return "done";
    case JobState::kEnded:
      return "ended";
    case JobState::kArrivalQueued:
      return "arrival_queued";
    case JobState::kHandingOver:
      return "handing_over";
    case JobState::kArriving:
      return "arriving";
    case JobState::kHeld:
      return "held";
    case JobState::kLeased:
      return "leased";
  }
  return "?";
}

bool MayMove(JobState from, JobState to) {
  if (to == JobState::kEnded) return from != JobState::kEnded;
  return (Next(from) & Bit(to)) != 0;
}

bool HoldsSlot(JobState state) {
  switch (state) {
    case JobState::kStarting:
    case JobState::kReceiving:
    case JobState::kComputing:
    case JobState::kReplying:
    case JobState::kDone:  // until the one-shot executable is gone or released
    case JobState::kLeased:
      return true;
    case JobState::kNew:
    case JobState::kQueued:
    case JobState::kIdle:
    case JobState::kEnded:
    case JobState::kArrivalQueued:
    case JobState::kHandingOver:
    case JobState::kArriving:
    case JobState::kHeld:
      return false;
  }
  return false;
}

bool CallOpen(JobState state) {
  switch (state) {
    case JobState::kReceiving:
    case JobState::kComputing:
    case JobState::kReplying:
    case JobState::kArriving:
    case JobState::kHeld:
      return true;
    case JobState::kNew:
    case JobState::kQueued:
    case JobState::kStarting:
    case JobState::kIdle:
    case JobState::kDone:
    case JobState::kEnded:
    case JobState::kArrivalQueued:
    case JobState::kHandingOver:
    case JobState::kLeased:  // not that ninfd knows: Observed(job)
      return false;
  }
  return false;
}

bool InQueue(JobState state) { return state == JobState::kQueued || state == JobState::kHeld; }

// Calls admitted after arrival count as soon as they may arrive: each of
// them will want a slot. A handle that keeps its slot counts as an idle one
// (its calls' time shows in the function's measured service time).
bool CountsInLoad(JobState state) {
  return (InQueue(state) || HoldsSlot(state) || AwaitsArrivalRoom(state) ||
          state == JobState::kHandingOver || state == JobState::kArriving) &&
         !KeepsSlot(state);
}

bool AwaitsArguments(JobState state) { return state == JobState::kNew; }

bool AwaitsHandoff(JobState state) {
  return state == JobState::kStarting || state == JobState::kHandingOver;
}

bool AwaitsArrivalRoom(JobState state) { return state == JobState::kArrivalQueued; }

bool ArrivedWithoutSlot(JobState state) {
  return state == JobState::kArriving || state == JobState::kHeld;
}

// Before the hand-off: the connection is the only way to the client. (kHeld
// is in the queue too, but its executable has the connection.)
bool ClientLossEndsCall(JobState state) {
  return AwaitsArguments(state) || state == JobState::kQueued || AwaitsHandoff(state) ||
         AwaitsArrivalRoom(state);
}

bool KillRefuses(JobState state) {
  return AwaitsArguments(state) || AwaitsHandoff(state) || AwaitsArrivalRoom(state);
}

bool ReadingArguments(JobState state) {
  return state == JobState::kReceiving || state == JobState::kArriving;
}

bool RoutineRuns(JobState state) { return state == JobState::kComputing; }

bool WritingResult(JobState state) { return state == JobState::kReplying; }

bool MovesCallData(JobState state) { return ReadingArguments(state) || WritingResult(state); }

bool HangupCancels(JobState state) { return CallOpen(state) && !WritingResult(state); }

HeartbeatWriter HeartbeatWriterIn(JobState state) {
  switch (state) {
    case JobState::kQueued:
    case JobState::kStarting:
    case JobState::kArrivalQueued:
    case JobState::kHandingOver:
      return HeartbeatWriter::kDaemon;
    case JobState::kComputing:
    case JobState::kHeld:  // the executable beats while it waits for CTL_SLOT
      return HeartbeatWriter::kExecutable;
    case JobState::kArriving:
    case JobState::kNew:
    case JobState::kReceiving:
    case JobState::kReplying:
    case JobState::kIdle:
    case JobState::kDone:
    case JobState::kEnded:
    case JobState::kLeased:
      return HeartbeatWriter::kNone;
  }
  return HeartbeatWriter::kNone;
}

bool IdleBetweenCalls(JobState state) { return state == JobState::kIdle; }

bool KeepsSlot(JobState state) { return state == JobState::kLeased; }

bool OneShotDone(JobState state) { return state == JobState::kDone; }

}  // namespace ninf::server
