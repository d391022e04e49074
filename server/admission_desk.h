// Admission's desk: the slots and threads (Admission) and the room under
// the arrival bounds (ArrivalGate), and what they are asked about a call:
// its demand (predicted run time, ranks, its user's quotas), its client
// for the per-client bounds, the refusal of a user over quota, whether a
// handle may keep its slot. It holds admission's state only; the job table
// (scheduler.h) decides what each answer does to a job.
#pragma once

#include <cstdint>
#include <string>

#include "protocol/status.h"
#include "server/admission.h"
#include "server/executable_supply.h"
#include "server/job.h"
#include "server/settings.h"
#include "server/stats.h"

namespace ninf::server {

class AdmissionDesk {
 public:
  // `settings` and `counters` are the server's (live); `supply` says how a
  // function's executable starts (its ranks hold cores); `epoch` starts
  // admission's clock.
  AdmissionDesk(const Settings &settings, int cores, Counters *counters,
                const ExecutableSupply &supply, Clock::time_point epoch);

  Admission &admission() { return admission_; }
  const Admission &admission() const { return admission_; }
  ArrivalGate &arrivals() { return arrivals_; }
  const ArrivalGate &arrivals() const { return arrivals_; }

  // Admission's clock: seconds since the server started.
  double Now() const;
  // What admission needs to know of a call (its predicted run time).
  CallDemand DemandOf(const Job &job) const;
  // The refusal of a call whose user has its quota of calls waiting:
  // those in the queue and `arriving` more (admission after arrival counts
  // the calls still arriving against the quota too).
  Status UserQueueFull(const Job &job, std::size_t arriving = 0) const;
  // The call holds a slot, `threads` and `cores` (its grant's) now; its
  // wait is counted.
  void AdmitJob(Job &job, int threads, int cores);
  // The arrival bounds now (the settings are live).
  ArrivalBounds Bounds() const;
  // Who a call's client is for the per-client arrival bounds: its user, else
  // its address.
  std::string ArrivalClient(const Job &job) const;
  // A call had to wait for a slot now (see MayKeepSlot).
  void NoteWait() { last_wait_ = Clock::now(); }
  // After `job`'s call: whether its handle keeps the slot for its next
  // call (keep_handle_slots; not `stopping`; its user checked since the
  // last reload, `policy_epoch`; nobody waits for a slot or for room, and
  // no call waited within the demand window).
  bool MayKeepSlot(const Job &job, bool stopping, uint64_t policy_epoch) const;

 private:
  const Settings &settings_;
  int cores_;
  Counters &counters_;
  const ExecutableSupply &supply_;
  Clock::time_point epoch_;
  Admission admission_;
  ArrivalGate arrivals_;
  uint64_t memory_bytes_ = 0;  // the machine's, for arrival_bytes = 0
  // When a call last had to wait for a slot: no handle keeps one within
  // demand_window_ms of it (MayKeepSlot), where leases would only be taken
  // back again and delay the slots' release to the calls' ends.
  Clock::time_point last_wait_{};
};

}  // namespace ninf::server
