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
      return Of(S::kQueued, S::kStarting);
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
      return Of(S::kQueued, S::kIdle);
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
      return true;
    case JobState::kNew:
    case JobState::kQueued:
    case JobState::kIdle:
    case JobState::kEnded:
      return false;
  }
  return false;
}

bool CallOpen(JobState state) {
  switch (state) {
    case JobState::kReceiving:
    case JobState::kComputing:
    case JobState::kReplying:
      return true;
    case JobState::kNew:
    case JobState::kQueued:
    case JobState::kStarting:
    case JobState::kIdle:
    case JobState::kDone:
    case JobState::kEnded:
      return false;
  }
  return false;
}

bool InQueue(JobState state) { return state == JobState::kQueued; }

bool CountsInLoad(JobState state) { return InQueue(state) || HoldsSlot(state); }

bool AwaitsArguments(JobState state) { return state == JobState::kNew; }

bool AwaitsHandoff(JobState state) { return state == JobState::kStarting; }

bool ClientLossEndsCall(JobState state) {
  return AwaitsArguments(state) || InQueue(state) || AwaitsHandoff(state);
}

bool KillRefuses(JobState state) { return AwaitsArguments(state) || AwaitsHandoff(state); }

bool ReadingArguments(JobState state) { return state == JobState::kReceiving; }

bool RoutineRuns(JobState state) { return state == JobState::kComputing; }

bool WritingResult(JobState state) { return state == JobState::kReplying; }

bool MovesCallData(JobState state) { return ReadingArguments(state) || WritingResult(state); }

bool HangupCancels(JobState state) { return CallOpen(state) && !WritingResult(state); }

HeartbeatWriter HeartbeatWriterIn(JobState state) {
  switch (state) {
    case JobState::kQueued:
    case JobState::kStarting:
      return HeartbeatWriter::kDaemon;
    case JobState::kComputing:
      return HeartbeatWriter::kExecutable;
    case JobState::kNew:
    case JobState::kReceiving:
    case JobState::kReplying:
    case JobState::kIdle:
    case JobState::kDone:
    case JobState::kEnded:
      return HeartbeatWriter::kNone;
  }
  return HeartbeatWriter::kNone;
}

bool IdleBetweenCalls(JobState state) { return state == JobState::kIdle; }

bool OneShotDone(JobState state) { return state == JobState::kDone; }

}  // namespace ninf::server
