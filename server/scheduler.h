// The job table: every call from its CALL frame to its end. Owns the jobs
// and the parts it composes: admission's state (admission_desk.h: slots,
// threads, the queue, the arrival bounds), where executables come from
// (executable_supply.h: the warm pool, cold spawns, the launch broker) and
// the watchdog (job_watch.h). Offers calls to admission along their plan,
// starts them, follows their executables' control events and finishes them.
//
//   Server ──Submit(conn, params)──> Job: offered (once its arguments begin),
//                                    queued or started
//   ExecutableSupply ──warm or cold Process──> Job
//   Job ──ARGS_RECEIVED / CALL_DONE / exit──> Scheduler ──FinishJob──> slot
//                                    freed, stats, next queued call
//
// Every way a job can end (normal exit, executable failure, spawn failure,
// client gone, queue full, shutdown) goes through FinishJob(), the only place
// that frees a slot, counts the call and admits the next one.
//
// Each decision is asked of the policy (admission.h, job_state.h,
// warm_policy.h, watch_policy.h, reuse_policy.h, job_ending.h); each state
// change is made by the job itself (job.h). The Server keeps the
// connections and hands the scheduler the connection events that concern a
// call. Single-threaded, on the daemon's loop.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "daemon/connection.h"
#include "server/admission.h"
#include "server/admission_desk.h"
#include "server/admission_plan.h"
#include "server/executable_supply.h"
#include "server/job.h"
#include "server/job_ending.h"
#include "server/job_watch.h"
#include "server/kept_data_service.h"
#include "server/launch_broker.h"
#include "server/launcher.h"
#include "server/registry.h"
#include "server/settings.h"
#include "server/stats.h"
#include "server/user_policy.h"
#include "server/warm_pool.h"

namespace ninf::server {

// The job a connection of ninfd's was handed to (ClientConnection::job), or null.
inline Job *JobOf(const daemon::Connection &conn) {
  return static_cast<const ClientConnection &>(conn).job();
}

// What the job table tells the daemon around it. Narrow on purpose: the
// scheduler's other dependencies are its constructor's parameter types.
// The per-user counters' label of `user` (bounded: user_metric_labels).
std::string UserLabelOf(Counters *counters, const Settings &settings, const std::string &user);
// Core-seconds of the routines running now, so far.
double OpenBusyCoreSeconds(const JobTable &jobs);
// Predicted seconds of work of the running and queued calls (the load the
// metaserver sees).
double PredictedWorkSeconds(const JobTable &jobs, const Counters &counters);

class SchedulerObserver {
 public:
  virtual ~SchedulerObserver() = default;
  // A call was admitted, started or ended: the load the metaserver sees
  // may have changed.
  virtual void PublishLoad() = 0;
  // A job or a warm executable is gone: a shutdown may be complete.
  virtual void MaybeStopped() = 0;
};

class Scheduler : public JobEvents {
 public:
  // `settings`, `registry`, `counters` and `users` are the server's and
  // outlive the scheduler (reloads change them in place); `kept` keeps what
  // jobs' executables hand over (CTL_KEEP, CTL_PROVE, two-phase results);
  // `epoch` starts the scheduler's clock.
  Scheduler(uv_loop_t *loop, const Settings &settings, const Registry &registry, int cores,
            Counters *counters, Clock::time_point epoch, const UserPolicy &users,
            KeptDataService *kept, SchedulerObserver *observer);
  ~Scheduler() override;
  Scheduler(const Scheduler &) = delete;
  Scheduler &operator=(const Scheduler &) = delete;

  // A CALL for a served function: the job is made and parked on `conn`. It
  // asks admission for a slot only once its arguments have begun to arrive
  // (libninf sends them right behind the CALL; a `redirected` client sends
  // them to the executable): a client that sends CALL and then nothing holds
  // no slot, only its connection, and is ended after request_timeout_seconds.
  void Submit(daemon::Connection &conn, CallParams params, bool redirected);

  // Connection events that concern the job parked on `conn`.
  void OnInputArrived(daemon::Connection &conn);
  void OnOutputFlushed(daemon::Connection &conn);
  void OnHangup(daemon::Connection &conn);
  void OnPeerShutWrite(daemon::Connection &conn);
  // `job`'s connection was closed (and detached from it).
  void OnConnectionClosed(Job &job);

  // Twice a second: every job held to its deadlines (watch_policy.h Watch),
  // the idle handles to their budgets.
  void RunWatchdog();

  // Shutdown, in the order Server::Shutdown calls them. BeginShutdown: no
  // more calls (new ones are refused), the warm pool is closed, queued calls
  // and calls whose arguments never began are refused. StopIdleHandles:
  // persistent executables between calls are ended. KillAll: every running
  // executable is killed; calls not handed over yet are refused.
  void BeginShutdown();
  void StopIdleHandles();
  void KillAll(KillReason reason);

  // Takes back every slot a function handle keeps between its calls
  // (protocol/slot_lease.h): another call asks for one, a reload (whose
  // checks the handle's next call must pass: scheduler_events.cc
  // MayContinue), the
  // shutdown. Idle ones are free at once, those in a call at its end.
  void TakeBackKeptSlots();
  // A reload changed who may call what: every kept slot is taken back, and
  // none is granted again to a handle until its next call passes the
  // checks (a CALL_DONE that ninfd reads after the reload must not lease a
  // slot to a user the reload revoked).
  void PolicyChanged();

  // Where calls' executables come from: the warm pool, cold starts, the
  // launch broker. (SIGHUP clears the pool: the programs may have been
  // replaced; each function is warmed again after its next call.)
  ExecutableSupply &executables() { return supply_; }
  const ExecutableSupply &executables() const { return supply_; }

  // Admission and the arrival bounds, for the gauges and the load.
  const AdmissionDesk &desk() const { return desk_; }
  const JobTable &job_table() const { return jobs_; }
  // The job table's part of the gauges: calls, jobs, threads, warm pool.
  void AddGauges(Gauges *g) const;

 private:
  // JobEvents
  void OnArgsReceived(Job &job, bool resumed) override;
  void OnCallDone(Job &job, const ControlMsg &msg) override;
  void OnArriving(Job &job, uint64_t bytes) override;
  void OnWantSlot(Job &job) override;
  void OnReplying(Job &job) override;
  void OnClientGone(Job &job) override;
  void OnReleased(Job &job) override;
  void OnLeaseReturned(Job &job) override;
  void OnExit(Job &job) override;
  void OnKeep(Job &job, const ControlMsg &msg, daemon::UniqueFd data) override;
  void OnProve(Job &job, const ControlMsg &msg) override;
  void OnFetchAsk(Job &job, const ControlMsg &msg) override;

  // Plans how the call reaches its slot (admission_plan.h) and follows the
  // plan's first step.
  void OfferJob(Job &job);
  // kSlotFirst: a slot now, a place in the queue, or a refusal.
  void OfferSlotFirst(Job &job);
  // Admission after arrival: the call may arrive now (its executable gets
  // it without a slot) or waits for room under the arrival bounds.
  void OfferArrival(Job &job);
  // Starts the calls waiting for room under the arrival bounds that fit now.
  void AdmitArrivals();
  // Hands the admitted call to its executable (ExecutableSupply); a call
  // whose executable cannot start ends here.
  void StartJob(Job &job);
  void AdmitQueued();
  void FinishJob(Job &job, EndReason reason, const Status &why = Status());

  const Settings &settings_;
  Counters &counters_;
  const UserPolicy &users_;
  KeptDataService &kept_;
  SchedulerObserver &observer_;
  ExecutableSupply supply_;
  AdmissionDesk desk_;  // after the supply, which it asks
  JobWatch watch_;
  // Owned here; a job is freed in FinishJob.
  JobTable jobs_;
  uint64_t next_job_id_ = 1;
  uint64_t policy_epoch_ = 0;  // PolicyChanged() counts up
  bool admitting_ = false;
  bool admitting_arrivals_ = false;
  bool stopping_ = false;
};

// No job and no warm executable is left (the shutdown's end).
inline bool Drained(const Scheduler &s) {
  return s.job_table().empty() && s.executables().pool().empty();
}

}  // namespace ninf::server
