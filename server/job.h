// One call's executable: spawning it, handing it the client's connection,
// following its control channel, and noticing its exit.
//
//   ninfd ── socketpair (SOCK_SEQPACKET) ── executable fd 3 (kControlFd)
//     CTL_HANDOFF + client fd ──────────────>
//     <──── CTL_ARGS_RECEIVED / CTL_REPLYING / CTL_CALL_DONE (per call)
//
// The job keeps the parked client connection (ninfd's copy of the socket)
// and watches it for a hangup, without reading, while a call is under way
// and before the executable replies: a hangup then cancels the call. The
// server decides what each event means (job.h knows no statistics or slot
// policy); the job only reports it through JobEvents.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "control.h"
#include "status.h"

namespace ninf::server {

class Connection;
class Job;

using Clock = std::chrono::steady_clock;

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
enum class KillReason { kNone, kClientGone, kShutdown, kHandoffFailed };

class Job {
 public:
  Job(uv_loop_t *loop, JobEvents *events, uint64_t id, uint64_t call_id, std::string function,
      std::string executable, bool persistent, Connection *conn);
  Job(const Job &) = delete;
  Job &operator=(const Job &) = delete;

  // Spawns the executable (argv[0] = its path; stdin ignored, stdout and
  // stderr inherited, the control socket as fd 3; environment: ninfd's plus
  // OPENBLAS_NUM_THREADS and OMP_NUM_THREADS = `threads`, NINF_CALL_ID) in
  // its own process group, and hands it the client connection. Errors:
  // NINF_ERR_EXECUTABLE when it cannot be started (no OnExit follows then).
  Status Start(int threads, uint64_t max_call_bytes);

  // Sends SIGKILL to the executable's process group; OnExit follows.
  void Kill(KillReason reason);

  // Releases every handle and fd; the object deletes itself once libuv has
  // closed them (at once if none was opened). Call exactly once.
  void Close();

  // "signal 9" or "exit status 3", once exited.
  std::string ExitDescription() const;

  uint64_t id() const { return id_; }
  uint64_t call_id() const { return call_id_; }
  const std::string &function() const { return function_; }
  bool persistent() const { return persistent_; }
  Connection *conn() const { return conn_; }
  void detach_conn() { conn_ = nullptr; }
  bool started() const { return started_; }
  bool exited() const { return exited_; }
  int pid() const { return process_.pid; }
  // A call is under way: between hand-off (or ARGS_RECEIVED for later calls
  // of a persistent executable) and CALL_DONE.
  bool call_open() const { return call_open_; }
  // The executable has said CTL_REPLYING for the open call.
  bool replying() const { return replying_; }
  KillReason kill_reason() const { return kill_reason_; }
  int64_t exit_status() const { return exit_status_; }
  int term_signal() const { return term_signal_; }
  uint64_t calls_done() const { return calls_done_; }

  // Bookkeeping of the server, kept here so it lives and dies with the job.
  bool queued = false;                       // waiting in the admission queue
  bool holds_slot = false;                   // counted in the admission's running calls
  Clock::time_point arrived = Clock::now();  // CALL frame read
  Clock::time_point admitted;                // slot taken
  Clock::time_point call_started;            // current call's hand-off or ARGS_RECEIVED

 private:
  static void OnControlReadable(uv_poll_t *handle, int status, int events);
  static void OnProcessExit(uv_process_t *process, int64_t exit_status, int term_signal);
  static void OnHandleClosed(uv_handle_t *handle);

  void ReadControl();
  void HandleControl(const ControlMsg &msg);
  void StopControl();
  Status Spawn(int threads, int child_end);

  uv_loop_t *loop_;
  JobEvents *events_;
  uint64_t id_;
  uint64_t call_id_;
  std::string function_;
  std::string executable_;
  bool persistent_;
  Connection *conn_;

  uv_process_t process_{};
  uv_poll_t control_poll_{};
  int control_fd_ = -1;
  bool process_open_ = false;  // uv_spawn was called (it initializes even on failure)
  bool control_open_ = false;  // control_poll_ initialized
  bool control_polling_ = false;
  int closing_handles_ = 0;

  bool started_ = false;
  bool exited_ = false;
  bool call_open_ = false;
  bool replying_ = false;
  KillReason kill_reason_ = KillReason::kNone;
  int64_t exit_status_ = 0;
  int term_signal_ = 0;
  uint64_t calls_done_ = 0;
};

}  // namespace ninf::server
