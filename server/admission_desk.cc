// AdmissionDesk (admission_desk.h): what admission and the arrival bounds
// are asked about a call.
#include "server/admission_desk.h"

#include <unistd.h>

#include <algorithm>

#include "daemon/connection_set.h"
#include "daemon/log.h"
#include "server/job_state.h"

namespace ninf::server {

AdmissionDesk::AdmissionDesk(const Settings &settings, int cores, Counters *counters,
                             const ExecutableSupply &supply, Clock::time_point epoch)
    : settings_(settings),
      cores_(cores),
      counters_(*counters),
      supply_(supply),
      epoch_(epoch),
      admission_(settings.Scheduler(cores)),
      memory_bytes_(static_cast<uint64_t>(std::max(0L, ::sysconf(_SC_PHYS_PAGES))) *
                    static_cast<uint64_t>(std::max(0L, ::sysconf(_SC_PAGESIZE)))) {}

Status AdmissionDesk::UserQueueFull(const Job &job, std::size_t arriving) const {
  const std::string &owner = job.params().owner;
  const std::string user(ShownUser(owner));
  return Status(NINF_ERR_LIMIT,
                "user '" + user + "' has its quota of calls waiting already (max_queued = " +
                    std::to_string(settings_.QuotaOf(owner).queued) + ", from [users." + user +
                    "] or user_max_queued): " + std::to_string(admission_.queued_of(owner)) +
                    " waiting for a slot, " + std::to_string(arriving) + " arriving");
}

double AdmissionDesk::Now() const {
  return std::chrono::duration<double>(Clock::now() - epoch_).count();
}

CallDemand AdmissionDesk::DemandOf(const Job &job) const {
  CallDemand d;
  d.id = job.id();
  d.arrived = std::chrono::duration<double>(job.call().arrived - epoch_).count();
  // Admitted after arrival, the call knows its result's bytes and the rate
  // its arguments came at: the transfer still ahead of it.
  d.transfer_seconds = TransferSecondsAhead(
      job.call().arrival.bytes_out, job.call().arrival.bytes_in, job.call().arrival.recv_seconds);
  // The client's CalcOrder over the function's measured speed; nothing
  // known yet (or a persistent executable's next call, whose size only its
  // executable sees) counts as instant.
  auto it = counters_.functions.find(job.params().function);
  if (it != counters_.functions.end() && it->second.flops_per_second > 0)
    d.predicted_seconds =
        job.call().PredictedWork(job.params().work_flops) / it->second.flops_per_second;
  if (it != counters_.functions.end() && it->second.single_threaded) d.max_threads = 1;
  d.ranks = CoresHeld(supply_.LaunchOf(job.params().function), cores_);
  if (it != counters_.functions.end())
    d.brief = d.ranks == 0 &&
              IsBrief(d.predicted_seconds, it->second.recent_compute_seconds, it->second.completed);
  d.user = job.params().owner;
  const UserQuota quota = settings_.QuotaOf(d.user);
  d.user_slots = static_cast<int>(quota.slots);
  d.user_queued = static_cast<std::size_t>(quota.queued);
  return d;
}

void AdmissionDesk::AdmitJob(Job &job, int threads, int cores) {
  job.Admit(threads, cores);
  counters_.RecordWait(job.params().function, job.call().QueueSeconds());
  // Holding a slot, the call no longer counts against the arrival bounds
  // (AdmitArrivals, after the admissions, lets the next ones come).
  arrivals_.Done(job.id());
  // Admitted after arrival, the routine runs now: a client that shut its
  // write side while it waited hears a heartbeat (and a closed one resets).
  if (RoutineRuns(job.state()) && job.conn() && job.conn()->peer_shut_write()) Probe(job);
}

ArrivalBounds AdmissionDesk::Bounds() const {
  return ResolveArrivalBounds(settings_.arrival_limit, settings_.arrival_bytes,
                              settings_.client_arrival_limit, settings_.client_arrival_bytes,
                              memory_bytes_);
}

std::string AdmissionDesk::ArrivalClient(const Job &job) const {
  if (!job.params().owner.empty()) return "user " + job.params().owner;
  return job.conn() ? daemon::AddressOf(job.conn()->peer()) : std::string("-");
}

bool AdmissionDesk::MayKeepSlot(const Job &job, bool stopping, uint64_t policy_epoch) const {
  return settings_.keep_handle_slots && job.kept_slot().valid() && !stopping &&
         job.notes.policy_checked == policy_epoch && admission_.queued() == 0 &&
         arrivals_.waiting().calls == 0 &&
         Clock::now() - last_wait_ > std::chrono::milliseconds(settings_.demand_window_ms);
}

}  // namespace ninf::server
