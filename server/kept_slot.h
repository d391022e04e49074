// A handle's kept slot as ninfd sees it (protocol/slot_lease.h): the page
// it shares with the handle's executable, and which call and step the
// watchdog last saw in it. The job owns one and moves its own state
// (kIdle <-> kLeased) around the lease; this class reads the page for it.
#pragma once

#include <cstdint>

#include "daemon/unique_fd.h"
#include "protocol/slot_lease.h"
#include "protocol/status.h"
#include "server/call_record.h"
#include "server/job_state.h"

namespace ninf::server {

class KeptSlot {
 public:
  // Maps the page a handle's executable offers with its first CALL_DONE
  // (only a sealed page: the executable cannot shrink it under ninfd).
  Status Adopt(daemon::UniqueFd page);
  // Whether the executable has the page a kept slot is shared in.
  bool valid() const { return lease_.valid(); }
  SlotLease &lease() { return lease_; }
  const SlotLease &lease() const { return lease_; }

  // The state a job whose own state is `own` is in as far as its
  // executable has said: `own`, except that a handle keeping its slot
  // reports in the page whether a call is under way and in which step
  // (kIdle, kReceiving, kComputing, kReplying).
  JobState Observe(JobState own) const;
  // Since when the call Observe describes runs: for a leased call as its
  // executable reported (bounded by now and by the job's idle time), else
  // the call record's start.
  Clock::time_point CallStarted(JobState own, const CallRecord &call) const;
  // Whether a leased call began a new call or step since the last time this
  // was asked (the watchdog restarts the step's transfer clock on one).
  bool NewStep(JobState own);

 private:
  SlotLease lease_;  // mapped once sent by the executable (a handle's first granted slot)
  uint64_t seen_calls_ = 0;
  LeasePhase seen_phase_ = kLeasePhaseNone;
};

}  // namespace ninf::server
