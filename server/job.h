// One call and the executable serving it: handing it the client's
// connection, following its control channel, and noticing its exit.
//
//   ninfd                                  executable (Process)
//     CTL_HANDOFF + client fd ──────────────>
//     <──── CTL_ARGS_RECEIVED / CTL_REPLYING / CTL_CALL_DONE (per call)
//
// The executable is either started for the call (cold) or taken from the
// warm pool; the job does not care which. It keeps the parked client
// connection (ninfd's copy of the socket) and watches it for a hangup,
// without reading, while a call is under way and before the executable
// replies: a hangup then cancels the call. The server decides what each
// event means (job.h knows no statistics or slot policy); the job only
// reports it through JobEvents.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "control.h"
#include "process.h"
#include "status.h"

namespace ninf::server {

class Connection;
class Job;

class JobEvents {
 public:
  virtual ~JobEvents() = default;
  // CTL_ARGS_RECEIVED: a call's arguments are in; the executable computes.
  virtual void OnArgsReceived(Job &job) = 0;
  // CTL_CALL_DONE: one call finished (`msg` has its outcome and figures).
  virtual void OnCallDone(Job &job, const ControlMsg &msg) = 0;
  // The executable has exited and every control message it sent has been
  // handled. The server ends the job (FinishJob) from here.
  virtual void OnExit(Job &job) = 0;
};

// Why ninfd killed an executable, for the client's error and the stats.
enum class KillReason { kNone, kClientGone, kShutdown };

// What the client asked for in its CALL frame.
struct CallParams {
  uint64_t call_id = 0;
  std::string function;
  std::string executable;
  bool persistent = false;
  uint32_t heartbeat_ms = 0;  // already bounded by the server
};

class Job : public ProcessOwner {
 public:
  Job(JobEvents *events, uint64_t id, CallParams params, Connection *conn);
  Job(const Job &) = delete;
  Job &operator=(const Job &) = delete;

  // Hands the client connection to `process` (CTL_HANDOFF with the call id,
  // the limits, the persistent flag and the heartbeat period). On success
  // the job owns the process and returns true. On failure (the process has
  // died, typically) it returns false and the caller keeps the process.
  bool Handoff(Process *process, int threads, uint64_t max_call_bytes);

  // Sends SIGKILL to the executable's process group; OnExit follows.
  void Kill(KillReason reason);

  // Handles the control messages the executable has already sent. The
  // executable says CTL_REPLYING before it writes its result, so after this
  // a client hangup with the call still open and not replying really is a
  // client leaving before its result.
  void CatchUpControl() {
    if (process_) process_->ReadPendingControl();
  }

  // Releases the process (already exited) and deletes the job. Call exactly
  // once.
  void Close();

  // "signal 9" or "exit status 3", once exited.
  std::string ExitDescription() const;

  uint64_t id() const { return id_; }
  uint64_t call_id() const { return params_.call_id; }
  const std::string &function() const { return params_.function; }
  const std::string &executable() const { return params_.executable; }
  bool persistent() const { return params_.persistent; }
  uint32_t heartbeat_ms() const { return params_.heartbeat_ms; }
  Connection *conn() const { return conn_; }
  void detach_conn() { conn_ = nullptr; }
  bool started() const { return process_ != nullptr; }
  bool exited() const { return process_ && process_->exited(); }
  int pid() const { return process_ ? process_->pid() : 0; }
  // A call is under way: between hand-off (or ARGS_RECEIVED for later calls
  // of a persistent executable) and CALL_DONE.
  bool call_open() const { return call_open_; }
  // The executable has said CTL_REPLYING for the open call.
  bool replying() const { return replying_; }
  KillReason kill_reason() const { return kill_reason_; }
  int64_t exit_status() const { return process_ ? process_->exit_status() : 0; }
  int term_signal() const { return process_ ? process_->term_signal() : 0; }
  uint64_t calls_done() const { return calls_done_; }

  // Bookkeeping of the server, kept here so it lives and dies with the job.
  bool queued = false;                       // waiting in the admission queue
  bool holds_slot = false;                   // counted in the admission's running calls
  bool awaiting_flush = false;               // admitted; a heartbeat is still being written
  Clock::time_point arrived = Clock::now();  // CALL frame read
  Clock::time_point admitted;                // slot taken
  Clock::time_point call_started;            // current call's hand-off or ARGS_RECEIVED

 private:
  ~Job() override = default;

  // ProcessOwner
  void OnControl(Process &process, const ControlMsg &msg) override;
  void OnExit(Process &process) override;

  JobEvents *events_;
  uint64_t id_;
  CallParams params_;
  Connection *conn_;
  Process *process_ = nullptr;

  bool call_open_ = false;
  bool replying_ = false;
  KillReason kill_reason_ = KillReason::kNone;
  uint64_t calls_done_ = 0;
};

}  // namespace ninf::server
