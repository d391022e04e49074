// What ninfd knows of a job's current call: when it reached each step, what
// admission granted it and what its executable reported. The job writes it
// (Job's methods hold the only mutable reference); the scheduler, the
// watchdog, the executable supply and the status read it through
// Job::call(). A handle's record carries from one call to the next: each
// call moves the times it reaches.
#pragma once

#include <cstdint>
#include <string>

#include "protocol/control.h"
#include "server/job_ending.h"
#include "server/process.h"

namespace ninf::server {

struct CallRecord {
  Clock::time_point arrived = Clock::now();  // CALL frame read (a handle's next call: see WantSlot)
  Clock::time_point wait_from = arrived;     // where QueueSeconds counts from
  Clock::time_point admitted;                // slot taken
  Clock::time_point handed_at;        // the hand-off (a cold start's start-up counts from it)
  Clock::time_point call_started;     // hand-off, ARGS_RECEIVED or admission after arrival
  Clock::time_point computing_since;  // the routine runs (kComputing only)
  // The watchdog's clocks: the last progress of the current transfer (or
  // the state's start), since when the job is idle between calls or keeps
  // its slot, and since when the client has said nothing (it shut its write
  // side; a default time point: it has not).
  Clock::time_point progress_at = Clock::now();
  Clock::time_point idle_since;
  Clock::time_point client_quiet_since;

  int threads = 0;        // granted to the current call (0: not admitted yet)
  int cores = 0;          // of the thread budget, held by it (0: a brief call, admission.h)
  double work_flops = 0;  // its CalcOrder as its executable evaluated it (0: none, or not yet)
  // The last CTL_WANT_SLOT of a call admitted after arrival: the bytes
  // received, in how long, the result's bytes and its CalcOrder.
  ControlMsg arrival{};
  uint64_t calls_done = 0;
  bool args_first =
      false;              // its executable reads the arguments before the slot (kHandoffArgsFirst)
  bool reusable = false;  // this call's one-shot process comes back (CTL_RELEASED)
  bool cold_start = false;      // the executable was started for this job (not warm, not reused)
  bool last_call_kept = false;  // the call CALL_DONE last reported began on the kept slot
  // A handle's later call that asked for room under the arrival bounds
  // (CTL_ARRIVING, kArrivingAsksRoom) and has not had its CTL_ROOM yet: its
  // executable reads nothing meanwhile, and beats the client.
  bool awaits_room = false;
  // Whether the job holds a slot now (from Job::Admit until the scheduler
  // releases it: Job::SlotReleased). HoldsSlot(state) says what a state
  // means; this is the account, which a call that failed before its slot
  // (after arrival: kArriving or kHeld -> kDone) never opened.
  bool slot_held = false;
  // Why ninfd killed the executable (the first reason given), and what the
  // client is told for the reasons that tell it.
  KillReason kill_reason = KillReason::kNone;
  std::string kill_detail;

  // Seconds the current call waited for its slot: from its arrival (the
  // CALL frame; a handle's CTL_WANT_SLOT) to admission, or, admitted after
  // arrival, from its arguments being in (CTL_WANT_SLOT) to admission: the
  // transfer is not waiting.
  double QueueSeconds() const;
  // Of a cold start's first call: from the hand-off to the arguments being
  // in, less the time the executable spent receiving them (its CALL_DONE
  // recv_seconds): exec, loading, initialisation. Negative: not measured.
  double StartupSeconds(double recv_seconds) const;
  // The call's CalcOrder: its executable's figure once it has the arguments
  // (CTL_WANT_SLOT after arrival), else `claimed`, the client's in its CALL.
  double PredictedWork(double claimed) const {
    return arrival.work_flops > 0 ? arrival.work_flops : claimed;
  }
};

}  // namespace ninf::server
