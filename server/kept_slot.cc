#include "server/kept_slot.h"

#include <algorithm>
#include <chrono>

namespace ninf::server {

Status KeptSlot::Adopt(daemon::UniqueFd page) { return SlotLease::Map(page.release(), &lease_); }

JobState KeptSlot::Observe(JobState own) const {
  if (!KeepsSlot(own)) return own;
  if (!lease_.InCall()) return JobState::kIdle;
  switch (lease_.Phase()) {
    case kLeasePhaseReceiving:
      return JobState::kReceiving;
    case kLeasePhaseReplying:
      return JobState::kReplying;
    case kLeasePhaseNone:
    case kLeasePhaseComputing:
      return JobState::kComputing;
  }
  return JobState::kComputing;
}

Clock::time_point KeptSlot::CallStarted(JobState own, const CallRecord &call) const {
  if (!KeepsSlot(own) || !lease_.InCall()) return call.call_started;
  // The executable's CLOCK_MONOTONIC is steady_clock's here; a time it
  // reports from the future is taken as now.
  const Clock::time_point now = Clock::now();
  const Clock::time_point reported{std::chrono::duration_cast<Clock::duration>(
      std::chrono::nanoseconds(lease_.CallStartedNs()))};
  return reported > now ? now : std::max(reported, call.idle_since);
}

bool KeptSlot::NewStep(JobState own) {
  if (!KeepsSlot(own) || !lease_.InCall()) return false;
  const uint64_t calls = lease_.LeasedCalls();
  const LeasePhase phase = lease_.Phase();
  if (calls == seen_calls_ && phase == seen_phase_) return false;
  seen_calls_ = calls;
  seen_phase_ = phase;
  return true;
}

}  // namespace ninf::server
