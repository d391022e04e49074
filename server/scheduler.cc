// Scheduler: the job table, admission and the queue, starting a call on the
// executable the supply gives it (executable_supply.h), FinishJob (the one
// place every job ends), and the shutdown of jobs. The executables' and
// connections' events are in scheduler_events.cc, the watchdog's rounds in job_watch.cc.
#include "server/scheduler.h"

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "daemon/connection_set.h"
#include "daemon/log.h"
#include "protocol/frame.h"
#include "server/durations.h"
#include "server/job_state.h"

namespace ninf::server {
namespace {

// FinishJob's log line: call_end for a counted call, job_exit otherwise.
void LogEnding(const Job &job, const Ending &ending, const std::string &peer) {
  const std::string &name = job.params().function;
  const Process *process = job.exited() ? job.process() : nullptr;
  const std::string exit = process ? process->ExitDescription() : "-";
  if (ending.counted)
    spdlog::warn(
        "event=call_end job={} call={} function={} user={} peer={} outcome={} exit={} "
        "error={} wall_seconds={}",
        job.id(), job.params().call_id, name, ShownUser(job.params().owner), peer,
        CallOutcomeName(ending.outcome), daemon::Quoted(exit),
        daemon::Quoted(ending.tell.message()),
        Sec(SecondsBetween(job.call().arrived, Clock::now())));
  else if (process)
    spdlog::log(process->exit_status() == 0 && process->term_signal() == 0 ? spdlog::level::debug
                                                                           : spdlog::level::warn,
                "event=job_exit job={} call={} function={} user={} pid={} exit={} calls={}",
                job.id(), job.params().call_id, name, ShownUser(job.params().owner), job.pid(),
                daemon::Quoted(exit), job.call().calls_done);
}

}  // namespace

Scheduler::Scheduler(uv_loop_t *loop, const Settings &settings, const Registry &registry, int cores,
                     Counters *counters, Clock::time_point epoch, const UserPolicy &users,
                     KeptDataService *kept, SchedulerObserver *observer)
    : settings_(settings),
      counters_(*counters),
      users_(users),
      kept_(*kept),
      observer_(*observer),
      supply_(loop, settings, registry, cores, settings.Scheduler(cores).slots, counters,
              [this] { observer_.MaybeStopped(); }),
      desk_(settings, cores, counters, supply_, epoch),
      watch_(settings) {}

Scheduler::~Scheduler() = default;

void Scheduler::Submit(daemon::Connection &conn, CallParams params, bool redirected) {
  ++counters_.calls_received;
  auto owned = std::make_unique<Job>(this, next_job_id_++, std::move(params), &conn);
  Job *job = owned.get();
  job->notes.policy_checked = policy_epoch_;  // the server checked its CALL just now
  ClientConnection::Of(conn).set_job(job);
  jobs_.emplace(job->id(), std::move(owned));
  if (stopping_) {
    FinishJob(*job, EndReason::kRefused);
    return;
  }
  // A redirected client sends its arguments to the executable, not here; a
  // TLS client sends them only after the hand-over (FRAME_HANDOVER).
  if (!redirected && !conn.transport().tls() &&
      conn.PeekInput() != daemon::Connection::Unread::kBytes) {
    spdlog::debug("event=call_awaiting_arguments job={} call={} function={} peer={}", job->id(),
                  job->params().call_id, job->params().function, conn.peer());
    conn.WatchInput(true);
    return;
  }
  OfferJob(*job);
}

namespace {

// The length of the ARGS frame next in the socket (ninfd reads no byte past
// the CALL; libninf sends the arguments right behind it), from its header;
// false when it is not readable (over TLS, or not all there) or does not
// decode (the executable refuses it).
bool PeekArgsFrameBytes(const daemon::Connection &conn, uint64_t *bytes) {
  if (conn.transport().tls()) return false;
  uint8_t raw[kFrameHeaderSize];
  FrameHeader h;
  const ssize_t n = ::recv(conn.fd(), raw, sizeof raw, MSG_PEEK | MSG_DONTWAIT);
  if (n != static_cast<ssize_t>(sizeof raw) || !DecodeFrameHeader(raw, UINT64_MAX, &h).ok())
    return false;
  *bytes = kFrameHeaderSize + h.header_length + h.payload_length;
  return true;
}

// Whether the call's whole ARGS frame waits in the socket behind the CALL.
bool ArgumentsArrived(const daemon::Connection &conn) {
  uint64_t frame = 0;
  int queued = 0;
  return PeekArgsFrameBytes(conn, &frame) && ::ioctl(conn.fd(), FIONREAD, &queued) == 0 &&
         queued >= 0 && static_cast<uint64_t>(queued) >= frame;
}

}  // namespace

void Scheduler::OfferJob(Job &job) {
  AdmissionOrder order = AdmissionOrder::kArrival;
  (void)ParseAdmissionOrder(settings_.admission, &order);
  const Launch launch = supply_.LaunchOf(job.params().function);
  const AdmissionPlan plan = PlanAdmission({.order = order,
                                            .two_phase = job.params().two_phase(),
                                            .direct_launch = launch.direct(),
                                            .redirected = launch.over_tcp,
                                            .arguments_in = ArgumentsArrived(*job.conn())});
  job.notes.plan = plan;
  switch (plan.path) {
    case SlotPath::kSlotFirst:
      OfferSlotFirst(job);
      return;
    case SlotPath::kFreeSlotAtHandoff:
      // Nothing left to arrive and a slot free now: the call takes it at its
      // hand-off, which saves its executable a round trip to ninfd
      // (CTL_WANT_SLOT, CTL_SLOT) on the call's path. A call that would wait
      // waits with its arguments in its executable, as any other.
      if (int threads = 0, cores = 0;
          desk_.admission().TryRun(desk_.DemandOf(job), desk_.Now(), &threads, &cores)) {
        desk_.AdmitJob(job, threads, cores);
        StartJob(job);
        observer_.PublishLoad();
        return;
      }
      job.notes.plan = NoFreeSlot(plan);
      OfferArrival(job);
      return;
    case SlotPath::kArrivalFirst:
      OfferArrival(job);
      return;
  }
}

void Scheduler::OfferSlotFirst(Job &job) {
  daemon::Connection &conn = *job.conn();
  int threads = 0, cores = 0;
  switch (desk_.admission().Offer(desk_.DemandOf(job), desk_.Now(), &threads, &cores)) {
    case Admission::Decision::kRun:
      desk_.AdmitJob(job, threads, cores);
      StartJob(job);
      break;
    case Admission::Decision::kQueue:
      job.Queue();
      conn.WatchHangup(true);
      // ninfd owns the socket until the hand-off, so it proves the call
      // alive itself while it waits (and learns so that the client is gone).
      conn.SetHeartbeats(job.params().heartbeat_ms);
      spdlog::info("event=call_queued job={} call={} function={} user={} peer={} queued={}",
                   job.id(), job.params().call_id, job.params().function,
                   ShownUser(job.params().owner), conn.peer(), desk_.admission().queued());
      // No handle keeps a slot (or its threads) while a call waits: an
      // idle one's is free at once (AdmitQueued may start this call).
      desk_.NoteWait();
      TakeBackKeptSlots();
      break;
    case Admission::Decision::kReject:
      FinishJob(job, EndReason::kQueueFull);
      break;
    case Admission::Decision::kUserQueueFull:
      FinishJob(job, EndReason::kOverQuota, desk_.UserQueueFull(job));
      break;
  }
  observer_.PublishLoad();
}

void Scheduler::OfferArrival(Job &job) {
  daemon::Connection &conn = *job.conn();
  // The ARGS frame's lengths are the bytes the call will hold (not
  // readable over TLS).
  const ArrivalBounds bounds = desk_.Bounds();
  uint64_t frame_bytes = 0;
  const bool known = PeekArgsFrameBytes(conn, &frame_bytes);
  // Refused now if its slot request would be, once its arguments are in:
  // ninfd can still tell the client why, and counts it as refused.
  std::size_t arriving = 0, user_arriving = 0;
  for (const auto &[id, other] : jobs_) {
    const JobState st = other->state();
    if (AwaitsArrivalRoom(st) || st == JobState::kHandingOver || st == JobState::kArriving) {
      ++arriving;
      if (other->params().owner == job.params().owner) ++user_arriving;
    }
  }
  switch (desk_.admission().Precheck(desk_.DemandOf(job), arriving, user_arriving)) {
    case Admission::Decision::kReject:
      FinishJob(job, EndReason::kQueueFull);
      observer_.PublishLoad();
      return;
    case Admission::Decision::kUserQueueFull:
      FinishJob(job, EndReason::kOverQuota, desk_.UserQueueFull(job, user_arriving));
      observer_.PublishLoad();
      return;
    case Admission::Decision::kRun:
    case Admission::Decision::kQueue:
      break;
  }
  const ArrivalGate::Call call{job.id(), desk_.ArrivalClient(job),
                               ChargedArrivalBytes(known, frame_bytes, bounds)};
  if (desk_.arrivals().Offer(call, bounds)) {
    job.PassArrival();
    StartJob(job);
  } else {
    job.QueueArrival();
    conn.WatchHangup(true);
    // As for a queued call: ninfd owns the socket until the hand-off.
    conn.SetHeartbeats(job.params().heartbeat_ms);
    spdlog::info(
        "event=call_arrival_queued job={} call={} function={} user={} peer={} bytes={} "
        "arriving={} arrival_bytes={} waiting={}",
        job.id(), job.params().call_id, job.params().function, ShownUser(job.params().owner),
        conn.peer(), call.bytes, desk_.arrivals().held().calls, desk_.arrivals().held().bytes,
        desk_.arrivals().waiting().calls);
  }
  observer_.PublishLoad();
}

void Scheduler::StartJob(Job &job) {
  if (!job.conn()) {  // the client vanished before its call could start
    FinishJob(job, EndReason::kHangup);
    return;
  }
  // A heartbeat still on its way must be out before the executable shares
  // the socket, or its frames would interleave with ours.
  job.conn()->SetHeartbeats(0);
  // Over TLS the client waits for the hand-over key, sent as the last frame
  // of ninfd's session; once it is out, the session is freed and the
  // executable gets the key with the socket (Job::Handoff).
  // (A redirected call is not handed over: its REDIRECT goes inside
  // ninfd's session and the client connects to the executable itself.)
  const bool hand_over_tls =
      job.conn()->transport().active() && !supply_.LaunchOf(job.params().function).over_tcp;
  if (hand_over_tls && !job.conn()->handover_sent()) {
    if (Status st = job.conn()->SendHandover(); !st.ok()) {
      FinishJob(job, EndReason::kRefused, st);
      return;
    }
  }
  if (job.conn()->output_pending()) {  // OnOutputFlushed starts it again
    job.conn()->NotifyWhenFlushed();
    return;
  }
  if (hand_over_tls) job.conn()->SealTls();
  // Off the call path, the pool makes sure the next call finds an
  // executable waiting (WarmAfterHandoff decides when). A function's first
  // call arms its warming, whether or not that call could start (the pool's
  // restart policy bounds the attempts).
  const std::string function = job.params().function, executable = job.params().executable;
  bool warm = false;
  if (Status st = supply_.Handoff(job, stopping_, &warm); !st.ok()) {
    FinishJob(job, EndReason::kSpawnFailed, st);
    supply_.pool().Replenish(function, executable);
    return;
  }
  spdlog::info(
      "event=call_start job={} call={} function={} user={} peer={} pid={} threads={} "
      "persistent={} warm={} heartbeat_ms={} queue_seconds={}",
      job.id(), job.params().call_id, job.params().function, ShownUser(job.params().owner),
      job.conn() ? job.conn()->peer() : "-", job.pid(), job.call().threads, job.params().persistent,
      warm, job.params().heartbeat_ms,
      Sec(SecondsBetween(job.call().arrived, job.call().admitted)));
  supply_.WarmAfter(job, warm, desk_.admission().threads_held(), function, executable);
}

void Scheduler::AdmitArrivals() {
  if (admitting_arrivals_) return;
  admitting_arrivals_ = true;
  while (std::optional<uint64_t> id = desk_.arrivals().Next(desk_.Bounds())) {
    Job &job = *jobs_.at(*id);
    if (job.call().awaits_room) {  // a handle's later call: its executable reads on
      job.AnswerRoom(Status::Ok());
      continue;
    }
    job.PassArrival();
    StartJob(job);  // may end the job (FinishJob), which lands here again: not re-entered
  }
  admitting_arrivals_ = false;
}

void Scheduler::AdmitQueued() {
  // Not re-entered: a start that fails ends its job, whose FinishJob lands
  // here again; the outer loop then simply continues.
  if (admitting_) return;
  admitting_ = true;
  while (std::optional<Grant> grant = desk_.admission().Next(desk_.Now())) {
    Job &job = *jobs_.at(grant->id);
    const bool resumed = job.started();  // a persistent executable's next call
    desk_.AdmitJob(job, grant->threads, grant->cores);
    // The hang-up watch stays on: a client leaving before the hand-off
    // (while a last heartbeat is written) cancels its call.
    if (!resumed) StartJob(job);
  }
  admitting_ = false;
  AdmitArrivals();  // admitted calls left the arrival bounds room
  observer_.PublishLoad();
}

void Scheduler::FinishJob(Job &job, EndReason reason, const Status &why) {
  daemon::Connection *conn = job.conn();
  const Ending ending = DescribeEnding(FactsOf(job, desk_.admission().queued()), reason, why);
  // (Unconditionally: a call that ended its wait otherwise, e.g. by a
  // failed CALL_DONE while held, must never be granted a slot.)
  desk_.admission().Withdraw(job.id());
  // By the job's own account, not its state: a call admitted after arrival
  // that failed before its slot (kArriving or kHeld -> kDone) holds none.
  if (job.call().slot_held) desk_.admission().Release(job.call().cores, job.params().owner);
  // If it waited for room under the arrival bounds (before its hand-off, or
  // a handle's later call), or held some.
  desk_.arrivals().Withdraw(job.id());
  desk_.arrivals().Done(job.id());
  job.End();

  const std::string &name = job.params().function;
  if (ending.counted) {
    counters_.RecordCall(name, ending.outcome, 0, 0, 0);
    counters_.RecordUserCall(UserLabelOf(&counters_, settings_, job.params().owner),
                             ending.outcome);
  }
  LogEnding(job, ending, conn ? conn->peer() : "-");

  // A two-phase call's kept result: its client hears `tell` or collects it.
  if (job.params().two_phase()) kept_.SettleResult(job, ending.tell);
  if (conn) {
    job.detach_conn();
    // Gently in both cases: a close with unread input would reset the
    // connection and could destroy what the client has not read yet.
    if (!ending.tell.ok())
      conn->Fail(ending.tell);
    else
      conn->Finish();
  }
  if (job.started()) supply_.pool().Refill(name);  // see StartJob
  jobs_.erase(job.id());                           // frees the job: not to be touched below
  AdmitQueued();
  observer_.MaybeStopped();
}

void Scheduler::RunWatchdog() {
  const Clock::time_point now = Clock::now();
  for (uint64_t id : watch_.Run(jobs_, now)) {
    auto it = jobs_.find(id);  // an earlier ending may have ended it
    if (it == jobs_.end() || !AwaitsArguments(it->second->state())) continue;
    FinishJob(*it->second, EndReason::kNoArguments,
              Status(NINF_ERR_TIMEOUT, "the call's arguments did not begin within " +
                                           std::to_string(settings_.request_timeout_seconds) +
                                           " s of its CALL (request_timeout_seconds)"));
  }
  watch_.StopIdleHandlesOverBudget(jobs_, now);
}

void Scheduler::BeginShutdown() {
  stopping_ = true;
  supply_.pool().Close();
  for (uint64_t id : desk_.arrivals().TakeWaiting()) {
    Job &job = *jobs_.at(id);
    // A handle's later call is refused through its executable, which
    // fails the call.
    if (job.call().awaits_room)
      job.AnswerRoom(Status(NINF_ERR_SHUTTING_DOWN, "the server is shutting down"));
    else
      FinishJob(job, EndReason::kRefused);
  }
  for (uint64_t id : desk_.admission().TakeQueue()) {
    Job &job = *jobs_.at(id);
    // A call whose executable holds its arguments (or a handle's next
    // call) is refused through it: its executable fails the call.
    if (job.started())
      job.RefuseSlot(Status(NINF_ERR_SHUTTING_DOWN, "the server is shutting down"));
    else
      FinishJob(job, EndReason::kRefused);
  }
  // So are calls whose arguments never began (they hold no slot yet).
  std::vector<Job *> awaiting;
  for (auto &[id, job] : jobs_)
    if (AwaitsArguments(job->state())) awaiting.push_back(job.get());
  for (Job *job : awaiting) FinishJob(*job, EndReason::kRefused);
  // Last: a kept slot given back admits nothing now that the queue is empty.
  TakeBackKeptSlots();
}

void Scheduler::StopIdleHandles() {
  // Persistent executables between calls run nothing the grace period
  // should wait for.
  for (auto &[id, job] : jobs_)
    if (job->params().persistent && job->started() && !CallOpen(Observed(*job)))
      job->Kill(KillReason::kShutdown);
}

void Scheduler::KillAll(KillReason reason) {
  // A call admitted but not yet handed over (its client does not read the
  // last heartbeat), or still waiting for its arguments, has no executable
  // to kill: it is refused instead.
  std::vector<Job *> unstarted;
  for (auto &[id, job] : jobs_) {
    if (KillRefuses(job->state()))
      unstarted.push_back(job.get());
    else
      job->Kill(reason);
  }
  for (Job *job : unstarted) FinishJob(*job, EndReason::kRefused);
}

void Scheduler::AddGauges(Gauges *g) const {
  g->threads_held = desk_.admission().threads_held();
  g->brief_running = desk_.admission().brief_running();
  g->busy_core_seconds = counters_.busy_core_seconds + OpenBusyCoreSeconds(jobs_);
  g->running = desk_.admission().running();
  g->queued = desk_.admission().queued();
  g->warm_idle = supply_.pool().idle();
  g->admission = settings_.admission;
  const ArrivalBounds bounds = desk_.Bounds();
  g->arrival_limit = bounds.calls;
  g->arrival_bytes_limit = bounds.bytes;
  g->arrival_waiting = desk_.arrivals().waiting().calls;
  g->arrival_waiting_bytes = desk_.arrivals().waiting().bytes;
  g->arrival_held = desk_.arrivals().held().calls;
  g->arrival_held_bytes = desk_.arrivals().held().bytes;
  g->jobs = 0;
  for (const auto &[id, job] : jobs_) {
    if (job->params().persistent && job->started() && !job->exited()) ++g->persistent_executables;
    if (KeepsSlot(job->state())) ++g->kept_slots;
    // Live executables, and calls about to get one (as before: queued calls
    // without an executable are not jobs).
    if (job->started() || !(InQueue(job->state()) || AwaitsArrivalRoom(job->state()))) ++g->jobs;
    if (job->state() == JobState::kArriving && !job->call().awaits_room) {
      ++g->arriving;
    } else if (job->state() == JobState::kHeld) {
      ++g->held;
      g->held_bytes += job->call().arrival.bytes_in;
    }
  }
}

double OpenBusyCoreSeconds(const JobTable &jobs) {
  const Clock::time_point now = Clock::now();
  double sum = 0;
  for (const auto &entry : jobs) {
    const Job &job = *entry.second;
    if (RoutineRuns(job.state()) && job.call().computing_since <= now)
      sum += std::chrono::duration<double>(now - job.call().computing_since).count() *
             job.call().threads;
  }
  return sum;
}

double PredictedWorkSeconds(const JobTable &jobs, const Counters &counters) {
  // Predicted work: a computing call whose size is known (its CalcOrder,
  // reported when its arguments were in) counts what remains of it at the
  // function's measured speed; any other running or queued call counts its
  // function's mean service time (nothing before its first call).
  const auto now = std::chrono::steady_clock::now();
  double work = 0;
  for (const auto &[id, job] : jobs) {
    if (!CountsInLoad(job->state())) continue;
    auto f = counters.functions.find(job->params().function);
    if (f == counters.functions.end()) continue;
    if (RoutineRuns(job->state()) && job->call().work_flops > 0 && f->second.flops_per_second > 0) {
      double elapsed = std::chrono::duration<double>(now - job->call().call_started).count();
      work += std::max(0.0, job->call().work_flops / f->second.flops_per_second - elapsed);
    } else if (f->second.completed > 0) {
      work += f->second.busy_seconds / static_cast<double>(f->second.completed);
    }
  }
  return work;
}

std::string UserLabelOf(Counters *counters, const Settings &settings, const std::string &user) {
  return UserLabel(&counters->user_labels, user,
                   static_cast<std::size_t>(settings.user_metric_labels));
}

}  // namespace ninf::server
