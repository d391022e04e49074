// The life of a job (job.h): its states, every question the daemon asks
// about them, and which state may follow which. One list per fact: a new
// state is a compile error in every switch below until each question has an
// answer for it, and a test (tests/server/job_state_test.cc) pins them all.
//
//   kNew ──> kQueued ──> kStarting ──> kReceiving ──> kComputing ──> kReplying
//     └──────────────────────^              │ CALL_DONE      │             │
//                                           v                v             v
//                                 persistent: kIdle ──ARGS_RECEIVED──> kComputing
//                                 one-shot:   kDone (the executable exits, or
//                                             says CTL_RELEASED when reusable)
//
// and from any state to kEnded, once, when the job is finished
// (Scheduler::FinishJob). A persistent executable's next call goes kIdle ->
// kQueued -> kReceiving (or back to kIdle when it gets no slot).
//
// Admission after arrival (admission.h ArrivesFirst) has states of its own,
// none of which holds a slot:
//
//   kNew ──> kArrivalQueued ──> kHandingOver ──> kArriving ──> kHeld ──> kComputing
//     └──────────────────────────────^         WANT_SLOT ─────^   └─ Admit (slot, threads)
//
// kArrivalQueued waits for room under the arrival bounds (before the
// hand-off, like kQueued); kHandingOver waits for ninfd's last heartbeat to
// be written out (like kStarting); kArriving is the executable reading the
// arguments (like kReceiving); kHeld is the call with its arguments in
// memory, waiting in the admission queue for its slot (CTL_WANT_SLOT sent,
// CTL_SLOT awaited). A persistent executable's next call under it goes
// kIdle -> kArriving (CTL_ARRIVING) -> kHeld -> kComputing. The later
// kinds of executables (reused one-shot processes, MPI jobs, Slurm steps,
// redirected calls) go through the same states: where an executable runs
// and how it was started is the launcher's business (launcher.h), not a
// state of the job.
//
// A persistent executable whose call is done may keep its slot while no
// other call asks for one (keep_handle_slots, protocol/slot_lease.h):
//
//   kIdle ──grant──> kLeased ──CALL_DONE (kept)──> kLeased
//                      └──taken back, or given back──> kIdle
//
// In kLeased ninfd does not know from a message whether a call is under
// way: the executable begins one on the kept slot without telling it. What
// it reports in the shared page (Observed(job), job.h) stands for the job's state
// wherever the watchdog or a hang-up asks.
#pragma once

#include <cstdint>

namespace ninf::server {

enum class JobState {
  kNew,        // read from a CALL frame, not yet offered to admission
  kQueued,     // waiting in the admission queue for a slot
  kStarting,   // holds a slot; the hand-off waits for a heartbeat to be written
  kReceiving,  // handed to the executable, which reads the call's arguments
  kComputing,  // CTL_ARGS_RECEIVED: the routine runs
  kReplying,   // CTL_REPLYING: the executable writes the result
  kIdle,       // a persistent executable between calls
  // Admission after arrival: no slot held in any of these.
  kArrivalQueued,  // waits for room under the arrival bounds, before the hand-off
  kHandingOver,    // may arrive; the hand-off waits for a heartbeat to be written
  kArriving,       // handed to the executable, which reads the arguments
  kHeld,           // arguments in memory; waits in the admission queue for a slot
  // A persistent executable between calls, or in a call it began on the
  // slot it kept (slot_lease.h): holds its slot.
  kLeased,
  kDone,   // a one-shot executable's call is done; it exits or is released
  kEnded,  // finished: nothing more happens to the job
};

// Every state, in declaration order (for tests and tables).
inline constexpr JobState kJobStates[] = {
    JobState::kNew,       JobState::kQueued,        JobState::kStarting,    JobState::kReceiving,
    JobState::kComputing, JobState::kReplying,      JobState::kIdle,        JobState::kDone,
    JobState::kEnded,     JobState::kArrivalQueued, JobState::kHandingOver, JobState::kArriving,
    JobState::kHeld,      JobState::kLeased,
};

const char *JobStateName(JobState state);

// Which state may follow `from` (Job::SetState checks every change against
// it). A state may follow itself only where a repeated control message
// (CTL_REPLYING) or a refused slot (RefuseSlot while idle) says so.
bool MayMove(JobState from, JobState to);

// --- Slots and calls ---

// Whether a job in `state` counts in the admission's running calls. An idle
// persistent executable holds no slot: its next call takes one again.
bool HoldsSlot(JobState state);

// Whether a call is under way: from the hand-off (or a persistent
// executable's CTL_ARGS_RECEIVED) to CTL_CALL_DONE.
bool CallOpen(JobState state);

// Whether the call waits in the admission queue (a queued call leaves it
// when it ends: Admission::Withdraw); kHeld's executable waits with it.
bool InQueue(JobState state);

// Whether the call counts in the load the metaserver sees: waiting for a
// slot or holding one.
bool CountsInLoad(JobState state);

// --- Before the hand-off ---

// Whether the CALL was read but its arguments have not begun to arrive: it
// asks for no slot yet, and is ended if they do not begin in time.
bool AwaitsArguments(JobState state);

// Whether the call waits only for ninfd's last heartbeat to be written out
// before the socket is handed over (holding its slot, or, admitted after
// arrival, its room under the arrival bounds).
bool AwaitsHandoff(JobState state);

// Whether the call waits before its hand-off for room under the arrival
// bounds (ArrivalGate; it leaves that queue when it ends).
bool AwaitsArrivalRoom(JobState state);

// Whether the call's executable has the call but the call holds no slot:
// it reads the arguments or holds them waiting for a slot (the arrival
// figures of --status and /metrics).
bool ArrivedWithoutSlot(JobState state);

// Whether losing the client's connection ends the job at once, as a
// cancelled call. Before the hand-off ninfd's socket is the only way to the
// client, so a client that hangs up (OnHangup) and a connection that closes
// (OnClosed: a socket error, often while writing a heartbeat) both mean the
// call can never be served; after it, the executable has its own copy of the
// socket and HangupCancels decides.
bool ClientLossEndsCall(JobState state);

// Whether a kill at shutdown refuses the call instead: it waits for its
// arguments or for its hand-off, so there is no executable to kill.
// (Queued calls were refused when the shutdown began.)
bool KillRefuses(JobState state);

// --- During a call ---

// Whether the executable reads the call's arguments.
bool ReadingArguments(JobState state);

// Whether the routine runs (its threads are busy; its size is known).
bool RoutineRuns(JobState state);

// Whether the executable writes the call's result: nothing can be injected
// into the socket any more, and its progress is the client's acknowledgements.
bool WritingResult(JobState state);

// Whether the call moves data on the socket (arguments in or the result
// out), which the watchdog holds to progress.
bool MovesCallData(JobState state);

// Whether a client hang-up in `state` means the client left before its
// result (the call is cancelled and the executable killed). Once the
// executable replies, a hang-up is the client leaving with its result.
bool HangupCancels(JobState state);

// Who writes heartbeats on the client's socket now, so who is asked for one
// at once when the client half-closes it.
enum class HeartbeatWriter {
  kNone,        // nobody: no call waits, or its data moves
  kDaemon,      // ninfd, while the call waits for its slot or hand-off
  kExecutable,  // the stub runtime's heartbeat thread, while the routine runs (CTL_PROBE)
};
HeartbeatWriter HeartbeatWriterIn(JobState state);

// --- After a call ---

// Whether a persistent executable waits between calls (holding no slot; the
// watchdog holds it to handle_idle_seconds).
bool IdleBetweenCalls(JobState state);

// Whether a persistent executable keeps its slot between its calls (it
// may be in a call it began on it: Observed(job) tells).
bool KeepsSlot(JobState state);

// Whether a one-shot call is done and its executable may go back to the
// pool (CTL_RELEASED) or exit.
bool OneShotDone(JobState state);

}  // namespace ninf::server
