// Server: the watchdog. Twice a second every job is held to its deadlines
// and the idle function-handle executables to their budgets; the decisions
// are the policy's (Watch, IdleHandlesToStop), this file only gathers the
// facts and carries the verdicts out.
//
// Transfer progress is read from the kernel, not from the executable: ninfd
// keeps its own descriptor of the client socket, and TCP_INFO tells how many
// bytes the socket has received (arguments) and had acknowledged (result).
// So a stopped executable, a client that stopped sending or reading, or
// data stuck in a socket after the client died all show as no progress,
// whatever the executable itself could still report.
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "log.h"
#include "server.h"
#include "tcp_progress.h"

namespace ninf::server {
namespace {

constexpr uint64_t kWatchPeriodMs = 500;

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
  return state == JobState::kReplying ? p.bytes_acked : p.bytes_received;
}

// Resident bytes of a process (0 if it cannot be read).
uint64_t ResidentBytes(int pid) {
  std::ifstream statm("/proc/" + std::to_string(pid) + "/statm");
  uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::string Seconds(int64_t ms) { return std::to_string((ms + 999) / 1000); }

}  // namespace

void Server::StartWatchdog() {
  uv_timer_start(
      &watch_timer_, [](uv_timer_t *t) { static_cast<Server *>(t->data)->RunWatchdog(); },
      kWatchPeriodMs, kWatchPeriodMs);
}

void Server::RunWatchdog() {
  const Clock::time_point now = Clock::now();
  struct Kill {
    Job *job;
    KillReason reason;
    std::string detail;
  };
  std::vector<Kill> kills;
  for (auto &[id, owned] : jobs_) {
    Job &job = *owned;
    if (!job.started() || job.exited()) continue;
    job.CatchUpControl();  // decide on the newest state
    const JobState state = job.state();
    if (state == JobState::kReceiving || state == JobState::kReplying)
      job.NoteProgress(BytesMoved(job.conn() ? job.conn()->fd() : -1, state), now);
    WatchLimits limits;
    limits.transfer_ms = settings_.transfer_timeout_seconds * 1000;
    limits.wall_ms = job.limits().wall_seconds * 1000;
    limits.handle_idle_ms = settings_.handle_idle_seconds * 1000;
    WatchFacts facts{state, MsBetween(job.call_started(), now), MsBetween(job.progress_at(), now),
                     MsBetween(job.idle_since(), now)};
    switch (Watch(facts, limits)) {
      case Verdict::kKeep:
        break;
      case Verdict::kStalled:
        kills.push_back(
            {&job, KillReason::kStalled,
             std::string(state == JobState::kReplying ? "the result" : "the arguments") + " of '" +
                 job.function() + "' made no progress for " + Seconds(limits.transfer_ms) +
                 " s (transfer_timeout_seconds)"});
        break;
      case Verdict::kWallLimit:
        kills.push_back({&job, KillReason::kWallLimit,
                         "'" + job.function() + "' exceeded its wall-clock limit of " +
                             std::to_string(job.limits().wall_seconds) + " s"});
        break;
      case Verdict::kIdleExpired:
        kills.push_back({&job, KillReason::kIdleExpired,
                         "the handle's executable was idle for " + Seconds(limits.handle_idle_ms) +
                             " s (handle_idle_seconds) and was stopped"});
        break;
    }
  }
  for (Kill &k : kills) {
    spdlog::info("event=watchdog_kill job={} call={} function={} pid={} reason={}", k.job->id(),
                 k.job->call_id(), k.job->function(), k.job->pid(), Quoted(k.detail));
    k.job->Kill(k.reason, std::move(k.detail));
  }
  WatchIdleHandles(now);
}

void Server::WatchIdleHandles(Clock::time_point now) {
  std::vector<IdleHandle> idle;
  for (auto &[id, job] : jobs_)
    if (job->state() == JobState::kIdle && job->started() && !job->exited() &&
        job->kill_reason() == KillReason::kNone)
      idle.push_back({id, MsBetween(job->idle_since(), now), ResidentBytes(job->pid())});
  if (idle.empty()) return;
  for (uint64_t id : IdleHandlesToStop(idle, static_cast<std::size_t>(settings_.max_idle_handles),
                                       static_cast<uint64_t>(settings_.idle_handle_memory))) {
    Job &job = *jobs_.at(id);
    spdlog::info("event=idle_handle_stopped job={} function={} pid={} reason=budget", id,
                 job.function(), job.pid());
    job.Kill(KillReason::kIdleExpired,
             "the server stopped the handle's idle executable to stay within its budget "
             "(max_idle_handles, idle_handle_memory)");
  }
}

}  // namespace ninf::server
