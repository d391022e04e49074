// Warm executables: processes started in advance and waiting for a call.
//
// Starting an executable costs ~1.7 ms (the registry's are linked fully
// static; 2.1 ms with OpenBLAS; 6-12 ms when they loaded shared libraries),
// against a loopback round trip of 0.02-0.35 ms, so a one-shot call that
// starts its executable reaches a small fraction of raw TCP. The stub runtime blocks in RecvControl
// until CTL_HANDOFF arrives, so a started process can wait for its call for free.
//
// After a function's first call (Replenish), the pool keeps `per_function`
// idle processes of it. A call takes one (Take) instead of spawning, and the
// server replenishes off the call path: right after the hand-off when the
// function has no idle process left, otherwise when the call ends (Refill),
// so that the replacement's start-up does not compete with the call for the
// processors. Idle processes hold no job slot, and run single-threaded:
// each call's hand-off carries its thread budget.
//
// Reused executables come back after their call (Return) and wait first in
// line: they have nothing left to load, and their buffers are warm. Up to
// `keep` idle ones per function are kept (at least per_function; as many as
// calls can run at once, so a loop of calls never starts a process), the
// rest exit. A process whose executable file was replaced since it started
// (ninf-gen --install over a running server) is never handed out: Take and
// Return retire it.
//
// One that dies while idle is replaced, at most once per second per
// function; after a few consecutive deaths soon after start the pool gives
// the function up (a warning says so) and its calls start cold, so a program
// that crashes at start-up never makes a fork loop (RestartPolicy in warm_policy.h).
// Clear() (registry reload) and Close() (shutdown) kill every idle process.
//
// Single-threaded, on the daemon's loop.
#pragma once

#include <uv.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <unordered_set>

#include "server/process.h"
#include "server/warm_policy.h"

namespace ninf::server {

class WarmPool : public ProcessOwner {
 public:
  struct Hooks {
    // Starts a process of `function` owned by `owner` (Process::Spawn with
    // the function's launch).
    std::function<Status(const std::string &function, const std::string &executable,
                         ProcessOwner *owner, Process **out)>
        spawn;
    std::function<void(const Process &)> spawned;  // every process the pool starts
    std::function<void()> reaped;                  // one of the pool's processes is gone
  };

  WarmPool(uv_loop_t *loop, int per_function, int keep, Hooks hooks);
  WarmPool(const WarmPool &) = delete;
  WarmPool &operator=(const WarmPool &) = delete;

  // An idle process of `function` started from `executable` (a returned one
  // first, else the oldest started one), now owned by the caller; null when
  // there is none.
  Process *Take(const std::string &function, const std::string &executable);

  // A reused executable is free again (CTL_RELEASED). The pool keeps it
  // (true) unless it is closed, the function was cleared or already has
  // `keep` idle processes, or the file was replaced: then it retires it.
  // A full pool keeps a process that comes back from a call over one that
  // never served any (started to replace the first while its call ran, as
  // a call longer than a start does): the next call then takes the one
  // that comes back, and the pool stops starting a process per call.
  bool Return(Process *process);

  // Starts processes until `function` has per_function idle ones (none once
  // the function was given up, or when the pool is disabled or closed). The
  // first call arms the function.
  void Replenish(const std::string &function, const std::string &executable);

  // Replenish for a function that is armed already; nothing otherwise.
  void Refill(const std::string &function);

  // Arms `function` without starting anything now: the next Refill (when a
  // call ends) starts its processes.
  void Arm(const std::string &function, const std::string &executable);

  // A process whose hand-off failed (it has died, usually), whoever started
  // it: the pool kills it, reaps it and closes it.
  void Discard(Process *process);

  // Registry reload: kills every idle process and forgets every function
  // (and its give-up), so the next call of each starts afresh.
  void Clear();

  // Shutdown: Clear(), and no more processes from now on.
  void Close();

  std::size_t idle() const;
  std::size_t idle(const std::string &function) const;
  // No process of the pool is alive any more.
  bool empty() const { return live_.empty(); }

 private:
  struct Function {
    std::string executable;
    std::deque<Process *> idle;
    RestartPolicy restarts;
  };

  // ProcessOwner
  void OnControl(Process &process, const ControlMsg &msg, daemon::UniqueFd attached) override;
  void OnExit(Process &process) override;

  bool SpawnOne(const std::string &name, Function &f);
  void NoteDeath(const std::string &name, Function &f, Clock::duration age);
  // Kills the newest idle process of `f` that never served a call, to make
  // room for one that comes back; false when there is none.
  bool RetireUnused(Function &f);
  // Logs once that `f` was given up (when `gave_up`) and schedules restarts.
  void NoteGiveUp(const std::string &name, Function &f, bool gave_up);
  void ScheduleRestarts();
  void RunRestarts();

  uv_loop_t *loop_;
  int per_function_;
  int keep_;
  Hooks hooks_;
  std::map<std::string, Function> functions_;
  std::unordered_set<Process *> live_;  // idle, or killed and not yet reaped
  uv_timer_t timer_{};
  bool closed_ = false;
};

}  // namespace ninf::server
