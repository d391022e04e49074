// One call and the executable serving it: handing it the client's
// connection, following its control channel, and noticing its exit. The job
// has one state (JobState, job_state.h), changed only by its own methods below;
// the scheduler and the connection ask, they do not write it.
//
//   ninfd                                  executable (Process)
//     CTL_HANDOFF + client fd ──────────────>
//     <──── CTL_ARGS_RECEIVED / CTL_REPLYING / CTL_CALL_DONE (per call)
//     <──── CTL_WANT_SLOT, CTL_SLOT ────>  (a persistent executable's next call)
//     <──── CTL_CLIENT_GONE                (a heartbeat to the client failed)
//     <──── CTL_RELEASED                   (a reusable one-shot executable is free)
//
// The executable is either started for the call (cold) or taken from the
// warm pool; the job does not care which. It keeps the parked client
// connection (ninfd's copy of the socket) and watches it for a hangup,
// without reading, while a call is under way and before the executable
// replies: a hangup then cancels the call. The scheduler decides what each
// event means (job.h knows no statistics or slot policy); the job only
// reports it through JobEvents.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "protocol/control.h"
#include "protocol/slot_lease.h"
#include "protocol/status.h"
#include "server/admission_plan.h"
#include "server/call_record.h"
#include "server/client_connection.h"
#include "server/job_ending.h"
#include "server/job_state.h"
#include "server/kept_slot.h"
#include "server/process.h"
#include "server/settings.h"

namespace ninf::daemon {
class Connection;
}

namespace ninf::server {

class Job;

class JobEvents {
 public:
  virtual ~JobEvents() = default;
  // CTL_ARGS_RECEIVED: a call's arguments are in; the executable computes.
  // `resumed`: a persistent executable's next call, after it was idle.
  virtual void OnArgsReceived(Job &job, bool resumed) = 0;
  // CTL_CALL_DONE: one call finished (`msg` has its outcome and figures).
  virtual void OnCallDone(Job &job, const ControlMsg &msg) = 0;
  // CTL_ARRIVING: a handle's next call admitted after arrival reads (or,
  // CallRecord::awaits_room, asks room to read) `bytes` of arguments; the
  // job is kArriving. The scheduler counts it under the arrival bounds and
  // answers one that asks room with Job::AnswerRoom, now or once there is.
  virtual void OnArriving(Job &job, uint64_t bytes) = 0;
  // CTL_WANT_SLOT: a persistent executable's client sent its next call,
  // which needs a slot (the job is kQueued now). The scheduler answers with
  // Admit() or RefuseSlot().
  virtual void OnWantSlot(Job &job) = 0;
  // CTL_REPLYING: the routine has returned; the executable writes the result.
  virtual void OnReplying(Job &job) = 0;
  // CTL_CLIENT_GONE: the executable could not write a heartbeat to the client.
  virtual void OnClientGone(Job &job) = 0;
  // CTL_RELEASED: a reusable one-shot executable closed the client's
  // connection after its call and waits for another. The scheduler ends the job
  // and takes the process back (ReleaseProcess).
  virtual void OnReleased(Job &job) = 0;
  // A handle's kept slot is free again (kLeased -> kIdle): the executable
  // asked for a slot instead of using it (protocol/slot_lease.h). The
  // scheduler gives the slot back to admission.
  virtual void OnLeaseReturned(Job &job) = 0;
  // The executable has exited and every control message it sent has been
  // handled. The scheduler ends the job (FinishJob) from here.
  virtual void OnExit(Job &job) = 0;
  // CTL_KEEP: the executable hands over data to keep (`data`, a memfd):
  // one array (answered with Job::Tell(KeptAnswer(...))) or a two-phase call's result.
  virtual void OnKeep(Job &job, const ControlMsg &msg, daemon::UniqueFd data) = 0;
  // CTL_PROVE: the executable authenticates to the ninfd of a data
  // reference with the caller's key (answered with Job::Tell(ProvedAnswer(...))).
  virtual void OnProve(Job &job, const ControlMsg &msg) = 0;
  // CTL_FETCH_ASK: may the executable dial the ninfd a data reference names
  // (answered with Job::Tell(FetchAnswer(...)))?
  virtual void OnFetchAsk(Job &job, const ControlMsg &msg) = 0;
};

// What the client asked for in its CALL frame.
struct CallParams {
  uint64_t call_id = 0;
  std::string function;
  std::string executable;
  bool persistent = false;
  bool reuse = true;          // the function lets one process serve many calls
  uint32_t heartbeat_ms = 0;  // already bounded by the server
  // A handle may keep its slot between calls (keep_handle_slots): its
  // executable gets the shared page with its first granted slot.
  bool may_keep_slot = false;
  // A redirected call (control_relay.h): how long its executable waits for
  // the client to come (request_timeout_seconds).
  uint32_t redirect_wait_ms = 0;
  // A redirected call's client runs TLS with rank 0 (the key goes in
  // FRAME_REDIRECT): its connection to ninfd is TLS, or is the same-host
  // socket of a ninfd with tls_cert (the redirect leg crosses the network).
  bool redirect_tls = false;
  FunctionLimits limits;  // the function's budget per call
  double work_flops = 0;  // the client's CalcOrder for the call (0: none)
  // Whose call it is (users.h: the user, "" anonymous), which owns what it
  // keeps (docs/transactions.md); the key its client proved ("" none), which
  // its executable fetches data references with (CTL_PROVE); for a
  // two-phase call the store entry reserved for its result.
  std::string owner;
  std::string key_id;
  // The account its executable runs as (users.h; unset: ninfd's). Such a
  // call always starts its own executable, which serves no other call.
  RunAs run_as;
  uint64_t store_id = 0;
  std::string token;
  double store_seconds = 0;

  // A two-phase call (docs/transactions.md): its result is kept, not sent.
  bool two_phase() const { return store_id != 0; }
};

class Job : public ProcessOwner {
 public:
  Job(JobEvents *events, uint64_t id, CallParams params, daemon::Connection *conn);
  ~Job() override;
  // Not copyable: it holds the mapping of a kept slot's page (KeptSlot).

  // kNew -> kQueued: no slot is free; the call waits for one.
  void Queue();
  // The call holds a slot, `threads` threads and `cores` cores of the
  // budget (0: a brief call) now. kNew or kQueued ->
  // kStarting for a call that still needs its executable; kQueued ->
  // kReceiving for a persistent executable's next call (CTL_SLOT tells it
  // to go on, with its threads and the time it waited).
  void Admit(int threads, int cores);
  // The scheduler has given the call's slot back (CallRecord::slot_held).
  void SlotReleased() { call_.slot_held = false; }

  // Admission after arrival (admission.h ArrivesFirst), before the
  // hand-off: kNew -> kArrivalQueued (no room under the arrival bounds; the
  // call waits for it), kNew or kArrivalQueued -> kHandingOver (it may
  // arrive: Handoff gives it its executable without a slot).
  void QueueArrival();
  void PassArrival();
  // A handle's later call that asked for room under the arrival bounds
  // (CTL_ARRIVING with kArrivingAsksRoom; CallRecord::awaits_room) gets it,
  // or is refused (`st`): CTL_ROOM. Its transfer is watched from here.
  void AnswerRoom(const Status &st);

  // CTL_WANT_SLOT (`msg`): kIdle -> kQueued, a persistent executable's next
  // call waits for a slot (its arguments still in the socket); admitted
  // after arrival, kArriving or kIdle -> kHeld, the arguments in memory
  // (msg's figures: what was received, in how long, what goes back).
  void WantSlot(const ControlMsg &msg);
  // kQueued, kHeld or kIdle -> kIdle: no slot for the persistent
  // executable's next call (CTL_SLOT with `st`'s code); it fails that call
  // and ends. A one-shot call refused in kHeld stays there: its executable
  // fails the call (CTL_CALL_DONE) and exits.
  void RefuseSlot(const Status &st);

  // kStarting -> kReceiving (kHandingOver -> kArriving, with
  // kHandoffArgsFirst and no threads yet): hands the client connection to `process`
  // (CTL_HANDOFF with the call id, the limits, the threads Admit granted,
  // the time the call waited, the persistent and reusable flags and the
  // heartbeat period). `reusable`: a
  // one-shot executable waits for another call afterwards (CTL_RELEASED).
  // On success the job owns the process and returns true. On failure (the
  // process has died, typically) it returns false, the state stays
  // kStarting and the caller keeps the process.
  bool Handoff(Process *process, uint64_t max_call_bytes, bool reusable);

  // After OnReleased: the process, no longer the job's (the caller owns it).
  Process *ReleaseProcess();

  // Any state -> kEnded, once: the scheduler has finished the job.
  void End();

  // Sends SIGKILL to the executable's process group; OnExit follows.
  // `detail` is what the client is told (for the reasons that tell it).
  void Kill(KillReason reason, std::string detail = {});

  // --- A handle keeping its slot between calls (protocol/slot_lease.h) ---
  // kIdle -> kLeased after a call, the slot still held: the executable may
  // begin its next call on it. False (nothing changed) when its executable
  // has no lease page.
  bool GrantLease();
  // kLeased: takes the slot back. kNow: free now (kLeased -> kIdle, the
  // caller releases it); kAfterCall: the call under way on it (or just
  // done) gives it back with its CALL_DONE (the job stays kLeased till
  // then). kNotLeased when the job keeps no slot.
  SlotLease::Taken TakeLease();
  // The watchdog's look at a leased call: a new call or step restarts the
  // step's transfer clock, as SetState does for the states ninfd sees.
  void NoteLeasedStep(Clock::time_point now);
  // The executable asked for a slot while it kept one: the lease ends.
  void ReturnUnusedLease();
  // The kept slot's page and what was last seen in it (kept_slot.h).
  const KeptSlot &kept_slot() const { return kept_; }

  // The watchdog moves the client's quiet time (CallRecord) on each time
  // ninfd beats in the executable's place (watch_policy.h:
  // DaemonBeatsForExecutable).
  void set_client_quiet_since(Clock::time_point at) { call_.client_quiet_since = at; }
  // Sends `msg` (an answer: KeptAnswer, ProvedAnswer; a probe) to the
  // executable with the call's id; 0 or the errno. A failure means the
  // executable is gone, and its exit ends the job anyway.
  int Tell(ControlMsg msg);
  const CallParams &params() const { return params_; }

  // The watchdog saw the socket's byte counter for the current transfer at
  // `moved`: a change is progress.
  void NoteProgress(uint64_t moved, Clock::time_point now);

  // Handles the control messages the executable has already sent. The
  // executable says CTL_REPLYING before it writes its result, so after this
  // a client hangup with the call still open and not replying really is a
  // client leaving before its result.
  void CatchUpControl() {
    if (process_) process_->ReadPendingControl();
  }

  uint64_t id() const { return id_; }
  ClientConnection *conn() const { return conn_; }
  // The connection goes (closed, or left to the executable): neither knows
  // the other any more.
  void detach_conn() {
    if (conn_) conn_->set_job(nullptr);
    conn_ = nullptr;
  }
  bool started() const { return process_ != nullptr; }
  bool exited() const { return process_ && process_->exited(); }
  int pid() const { return process_ ? process_->pid() : 0; }
  JobState state() const { return state_; }
  // The job's executable (null before the hand-off and after ReleaseProcess).
  const Process *process() const { return process_; }

  // The current call's times, grant and reports (call_record.h).
  const CallRecord &call() const { return call_; }
  // The job's executable was started for it (not taken warm or reused):
  // its first call's start-up is measured (CallRecord::StartupSeconds).
  void set_cold_start() { call_.cold_start = true; }

  // The scheduler's notes on the call, which the job only reads: how it
  // reaches its slot (admission_plan.h), set when it is offered to
  // admission (the hand-off tells the executable its part of it), and the
  // scheduler's policy epoch when the call's user and function were last
  // checked (Scheduler::PolicyChanged: a lease is granted only to a handle
  // checked since the last reload).
  struct SchedulerNotes {
    AdmissionPlan plan;
    uint64_t policy_checked = 0;
  } notes;

 private:
  // Moves to `next`; every transition of the job goes through here.
  void SetState(JobState next);

  // ProcessOwner
  void OnControl(Process &process, const ControlMsg &msg, daemon::UniqueFd attached) override;
  void OnArgsReceived();
  void OnReplying();
  void OnCallDone(const ControlMsg &msg);
  void OnExit(Process &process) override;

  JobEvents *events_;
  uint64_t id_;
  CallParams params_;
  ClientConnection *conn_;
  Process *process_ = nullptr;

  JobState state_ = JobState::kNew;
  CallRecord call_;
  uint64_t progress_moved_ = 0;
  KeptSlot kept_;
};

// The facts the policy needs to say what the job's end means.
JobFacts FactsOf(const Job &job, std::size_t queued);

// The state `job` is in as far as its executable has said: its own state,
// except that a handle keeping its slot reports in the shared page whether
// a call is under way and in which step (kIdle, kReceiving, kComputing,
// kReplying).
inline JobState Observed(const Job &job) { return job.kept_slot().Observe(job.state()); }

// The executable's answers, for Job::Tell: to CTL_KEEP, the entry that now
// holds the array, or st's error; to CTL_PROVE, the client proof
// (kControlNonceSize bytes), or st's error.
ControlMsg KeptAnswer(const Status &st, uint64_t store_id, const std::string &token);
ControlMsg ProvedAnswer(const Status &st, const uint8_t *proof);
// To CTL_FETCH_ASK: NINF_OK, or st's error.
ControlMsg FetchAnswer(const Status &st);

// kComputing: asks the executable for a heartbeat now (CTL_PROBE), when it
// is the one that beats (job_state.h HeartbeatWriterIn).
void Probe(Job &job);

// The jobs by id (the scheduler owns them; a job is freed when it ends).
using JobTable = std::unordered_map<uint64_t, std::unique_ptr<Job>>;

}  // namespace ninf::server
