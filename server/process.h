// One started executable and its control channel, before and after it takes
// a call. A Job starts one for a cold call; the WarmPool starts them in
// advance. Whoever owns the process at the moment (its ProcessOwner) gets its
// control messages and its exit; ownership moves from the pool to a job at
// hand-off time.
//
//   ninfd ── socketpair (SOCK_SEQPACKET) ── executable fd 3 (kControlFd)
//
// The executable blocks in RecvControl until CTL_HANDOFF arrives, so a warm
// process costs nothing but memory while it waits.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "daemon/unique_fd.h"
#include "protocol/control.h"
#include "protocol/status.h"
#include "server/launch_broker.h"
#include "server/launcher.h"

namespace ninf::server {

class Process;

// What identifies the file an executable was started from: ninf-gen
// --install replaces the file (a new inode) and a rebuild rewrites it (a new
// modification time), and a process of the old program must not serve
// calls of the new one.
struct FileStamp {
  uint64_t device = 0, inode = 0, size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileStamp &) const = default;
};
// The stamp of `path` now; all zero when it cannot be read.
FileStamp StampOf(const std::string &path);

using Clock = std::chrono::steady_clock;

class ProcessOwner {
 public:
  virtual ~ProcessOwner() = default;
  // A control message from the executable.
  // `attached`: the descriptor that came with the message (CTL_KEEP), if any.
  virtual void OnControl(Process &process, const ControlMsg &msg, daemon::UniqueFd attached) = 0;
  // The executable has exited (and every control message it sent before has
  // been delivered). The owner closes the process from here or later.
  virtual void OnExit(Process &process) = 0;
};

class Process {
 public:
  // Starts `executable` (argv[0] = its path; stdin ignored, stdout and stderr
  // inherited, the control socket as fd 3; environment: ninfd's with
  // OPENBLAS_NUM_THREADS = OMP_NUM_THREADS = 1 until a call's CTL_HANDOFF
  // says how many threads it may use, without NINF_CALL_ID, since a
  // warm process cannot know its call in advance, and with NINF_OFFLOAD=0,
  // so that an inherited libninf_offload never sends a routine's LAPACK
  // calls back to a server) in its own process group
  // and session, and watches its control channel.
  // Errors: NINF_ERR_EXECUTABLE when it cannot be started; *out is null then.
  //
  // With a launcher (`launch` not direct, launch.h) the launcher is started
  // instead, with the executable's path after its words and `launch.env`
  // added; the executable's rank 0 then claims the control channel from
  // `broker` (protocol/launch.h). Messages sent before that wait in the
  // channel, so the owner need not care. pid() is the launcher's.
  static Status Spawn(uv_loop_t *loop, const std::string &function, const std::string &executable,
                      const Launch &launch, LaunchBroker *broker, ProcessOwner *owner,
                      Process **out);

  Process(const Process &) = delete;
  Process &operator=(const Process &) = delete;

  void set_owner(ProcessOwner *owner) { owner_ = owner; }

  // Sends `msg` (a CTL_HANDOFF) with `fd` attached. Returns 0, or the errno
  // of the failure (then nothing was passed: usually the process has died).
  int Handoff(const ControlMsg &msg, int fd);
  // Sends a control message without a descriptor; 0 or the errno.
  int Send(const ControlMsg &msg) { return Handoff(msg, -1); }

  // SIGKILL to the process group and the process (to srun alone for a Slurm
  // step, whose helper then cancels the step); OnExit follows. No-op once
  // exited.
  void Kill();

  // Delivers the control messages already waiting in the channel now,
  // without waiting for the loop to notice them.
  void ReadPendingControl() { ReadControl(); }

  // Releases the handles and the control socket; the object deletes itself
  // once libuv has closed them. Only after OnExit (an unreaped child would
  // stay a zombie), exactly once.
  void Close();

  // "signal 9" or "exit status 3", once exited.
  std::string ExitDescription() const;

  // Whether its calls' clients are redirected to it instead of handed over
  // (it claims its channel over TCP: launcher.h).
  bool redirects() const { return launch_.over_tcp; }
  const std::string &function() const { return function_; }
  const std::string &executable() const { return executable_; }
  int pid() const { return pid_; }
  bool exited() const { return exited_; }
  int64_t exit_status() const { return exit_status_; }
  int term_signal() const { return term_signal_; }
  Clock::time_point spawned_at() const { return spawned_at_; }
  // The executable's file as it was when this process started.
  const FileStamp &stamp() const { return stamp_; }
  // Whether the file has been replaced or rewritten since.
  bool Stale() const { return StampOf(executable_) != stamp_; }
  // One-shot calls this process has served (it is reused between them).
  uint64_t calls_served() const { return calls_served_; }
  void CountCall() { ++calls_served_; }

 private:
  Process(uv_loop_t *loop, std::string function, std::string executable, Launch launch,
          LaunchBroker *broker, ProcessOwner *owner);
  ~Process() = default;

  // Start's steps, in order: the control channel, the launch broker's
  // claim (`child_end` handed to it unless direct), the spawn, the watches.
  Status Start();
  Status OpenControl(daemon::UniqueFd *child_end);
  Status PrepareLaunch(daemon::UniqueFd *child_end);
  // Sets pid_; `control_fd` becomes the child's fd 3.
  Status SpawnExecutable(char *const *args, char *const *envp, int control_fd);
  // Watches the exit and the control channel; a child that cannot be
  // watched is killed and reaped here.
  Status WatchStarted();
  void ReadControl();
  void StopControl();
  static void OnControlReadable(uv_poll_t *handle, int status, int events);
  // Watches pidfd_ for the exit (Start).
  Status WatchExit();
  // Reaps the process and tells the owner.
  static void OnPidfdReadable(uv_poll_t *handle, int status, int events);
  static void OnHandleClosed(uv_handle_t *handle);

  uv_loop_t *loop_;
  std::string function_;
  std::string executable_;
  Launch launch_;
  LaunchBroker *broker_;      // with a launcher: holds the channel until claimed
  std::string launch_token_;  // its claim
  ProcessOwner *owner_;

  int pid_ = 0;             // 0 until started
  daemon::UniqueFd pidfd_;  // readable once the process has exited
  uv_poll_t exit_poll_{};
  uv_poll_t control_poll_{};
  daemon::UniqueFd control_fd_;
  bool exit_open_ = false;     // exit_poll_ initialized
  bool control_open_ = false;  // control_poll_ initialized
  bool control_polling_ = false;
  int closing_handles_ = 0;

  Clock::time_point spawned_at_ = Clock::now();
  FileStamp stamp_;
  uint64_t calls_served_ = 0;
  bool exited_ = false;
  int64_t exit_status_ = 0;
  int term_signal_ = 0;
};

}  // namespace ninf::server
