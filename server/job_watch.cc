// JobWatch (job_watch.h): the facts the watchdog's policy judges, and its
// verdicts carried out.
//
// Transfer progress is read from the kernel, not from the executable: ninfd
// keeps its own descriptor of the client socket, and TCP_INFO tells how many
// bytes the socket has received (arguments) and had acknowledged (result).
// So a stopped executable, a client that stopped sending or reading, or
// data stuck in a socket after the client died all show as no progress,
// whatever the executable itself could still report.
#include "server/job_watch.h"

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <vector>

#include "daemon/log.h"
#include "server/job_state.h"
#include "server/tcp_progress.h"
#include "server/watch_policy.h"

namespace ninf::server {
namespace {

// Whether an idle handle may be stopped now, taking back its lease if it
// keeps its slot (so not a pure question). One that keeps its slot may
// begin a call on it at any moment: its lease is taken back first, and one
// whose call began is not idle. So a call the stop meets has not reached
// its routine, and its client is told NINF_ERR_EXPIRED (job_ending.cc).
bool TakeIdleToStop(Job &job) { return job.TakeLease() != SlotLease::Taken::kAfterCall; }

int64_t MsBetween(Clock::time_point from, Clock::time_point to) {
  if (from == Clock::time_point() || to < from) return 0;
  return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

// Bytes the socket has moved in the direction `state` transfers: received
// while the executable reads arguments, acknowledged by the client while it
// writes the result. 0 when the socket cannot tell (then only the deadline
// from the state's start applies).
uint64_t BytesMoved(int fd, JobState state) {
  TcpProgress p;
  if (!ReadTcpProgress(fd, &p)) return 0;
  return WritingResult(state) ? p.bytes_acked : p.bytes_received;
}

// Resident bytes of a process (0 if it cannot be read).
uint64_t ResidentBytes(int pid) {
  std::ifstream statm("/proc/" + std::to_string(pid) + "/statm");
  uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

// Whether a process is stopped (SIGSTOP, a debugger): state T or t in
// /proc/PID/stat, after the command name in parentheses.
bool ProcessStopped(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (pid <= 0 || !std::getline(stat, line)) return false;
  const std::size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() &&
         (line[paren + 2] == 'T' || line[paren + 2] == 't');
}

// Whether bytes written to the socket still wait to be sent.
bool OutputQueued(int fd) {
  int n = 0;
  return ::ioctl(fd, SIOCOUTQ, &n) != 0 || n > 0;
}

std::string Seconds(int64_t ms) { return std::to_string((ms + 999) / 1000); }

}  // namespace

std::vector<uint64_t> JobWatch::Run(const JobTable &jobs, Clock::time_point now) const {
  std::vector<Kill> kills;
  std::vector<uint64_t> no_arguments;
  // By id: catching up on control messages may end or start other jobs.
  std::vector<uint64_t> ids;
  for (const auto &[id, owned] : jobs) ids.push_back(id);
  for (uint64_t id : ids) {
    auto it = jobs.find(id);
    if (it == jobs.end()) continue;
    Job &job = *it->second;
    if (AwaitsArguments(job.state())) {
      // A CALL whose arguments have not begun (Scheduler::Submit): it holds
      // no slot, but its connection for no longer than a request may take.
      if (MsBetween(job.call().arrived, now) > settings_.request_timeout_seconds * 1000)
        no_arguments.push_back(id);
      continue;
    }
    if (!job.started() || job.exited()) continue;
    Kill kill{id, KillReason::kNone, {}};
    if (Judge(job, now, &kill))
      kills.push_back(std::move(kill));
    else
      BeatForStoppedExecutable(job, now);
  }
  for (Kill &k : kills) {
    auto it = jobs.find(k.job);
    if (it == jobs.end()) continue;
    Job &job = *it->second;
    if (k.reason == KillReason::kIdleExpired && !TakeIdleToStop(job)) continue;
    spdlog::info("event=watchdog_kill job={} call={} function={} pid={} reason={}", job.id(),
                 job.params().call_id, job.params().function, job.pid(), daemon::Quoted(k.detail));
    job.Kill(k.reason, std::move(k.detail));
  }
  return no_arguments;
}

bool JobWatch::Judge(Job &job, Clock::time_point now, Kill *kill) const {
  WatchLimits limits;
  limits.transfer_ms = settings_.transfer_timeout_seconds * 1000;
  limits.handle_idle_ms = settings_.handle_idle_seconds * 1000;
  auto verdict = [&] {
    // A handle that keeps its slot says in shared memory which step of a
    // call it is in; ninfd holds that call to the same deadlines.
    job.NoteLeasedStep(now);
    const JobState state = Observed(job);
    if (MovesCallData(state))
      job.NoteProgress(BytesMoved(job.conn() ? job.conn()->fd() : -1, state), now);
    limits.wall_ms = job.params().limits.wall_seconds * 1000;
    return Watch(
        WatchFacts{state, MsBetween(job.kept_slot().CallStarted(job.state(), job.call()), now),
                   MsBetween(job.call().progress_at, now), MsBetween(job.call().idle_since, now),
                   job.call().awaits_room},
        limits);
  };
  Verdict v = verdict();
  if (v == Verdict::kKeep) return false;
  // Before acting, take the control messages the executable has already
  // sent (an ARGS_RECEIVED may be waiting): decide on its newest state.
  job.CatchUpControl();
  if (job.exited() || (v = verdict()) == Verdict::kKeep) return false;
  switch (v) {
    case Verdict::kKeep:
      return false;
    case Verdict::kStalled:
      *kill = {job.id(), KillReason::kStalled,
               std::string(WritingResult(Observed(job)) ? "the result" : "the arguments") +
                   " of '" + job.params().function + "' made no progress for " +
                   Seconds(limits.transfer_ms) + " s (transfer_timeout_seconds)"};
      return true;
    case Verdict::kWallLimit:
      *kill = {job.id(), KillReason::kWallLimit,
               "'" + job.params().function + "' exceeded its wall-clock limit of " +
                   std::to_string(job.params().limits.wall_seconds) + " s"};
      return true;
    case Verdict::kIdleExpired:
      *kill = {job.id(), KillReason::kIdleExpired,
               "the handle's executable was idle for " + Seconds(limits.handle_idle_ms) +
                   " s (handle_idle_seconds) and was stopped"};
      return true;
  }
  return false;
}

void JobWatch::BeatForStoppedExecutable(Job &job, Clock::time_point now) const {
  daemon::Connection *conn = job.conn();
  if (!conn || job.call().client_quiet_since == Clock::time_point()) return;
  BeatFacts facts{Observed(job), conn->peer_shut_write(),
                  MsBetween(job.call().client_quiet_since, now), false, false};
  const int64_t liveness_ms = settings_.liveness_seconds * 1000;
  if (facts.client_quiet_ms < liveness_ms) return;  // the cheap facts first
  facts.executable_stopped = ProcessStopped(job.pid());
  facts.output_queued = OutputQueued(conn->fd());
  if (!DaemonBeatsForExecutable(facts, liveness_ms)) return;
  spdlog::info("event=beat_for_stopped_executable job={} call={} function={} pid={}", job.id(),
               job.params().call_id, job.params().function, job.pid());
  job.set_client_quiet_since(now);
  conn->BeatNow();  // a reset comes back as OnHangup
}

void JobWatch::StopIdleHandlesOverBudget(const JobTable &jobs, Clock::time_point now) const {
  std::vector<IdleHandle> idle;
  for (const auto &[id, job] : jobs)
    if (IdleBetweenCalls(Observed(*job)) && job->started() && !job->exited() &&
        job->call().kill_reason == KillReason::kNone)
      idle.push_back({id, MsBetween(job->call().idle_since, now), ResidentBytes(job->pid())});
  if (idle.empty()) return;
  for (uint64_t id : IdleHandlesToStop(idle, static_cast<std::size_t>(settings_.max_idle_handles),
                                       static_cast<uint64_t>(settings_.idle_handle_memory))) {
    Job &job = *jobs.at(id);
    if (!TakeIdleToStop(job)) continue;
    spdlog::info("event=idle_handle_stopped job={} function={} pid={} reason=budget", id,
                 job.params().function, job.pid());
    job.Kill(KillReason::kIdleExpired,
             "the server stopped the handle's idle executable to stay within its budget "
             "(max_idle_handles, idle_handle_memory)");
  }
}

}  // namespace ninf::server
