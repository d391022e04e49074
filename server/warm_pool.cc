#include "server/warm_pool.h"

#include <algorithm>

#include "daemon/log.h"

namespace ninf::server {

WarmPool::WarmPool(uv_loop_t *loop, int per_function, int keep, Hooks hooks)
    : loop_(loop),
      per_function_(per_function),
      keep_(std::max(keep, per_function)),
      hooks_(std::move(hooks)) {
  uv_timer_init(loop_, &timer_);
  timer_.data = this;
}

Process *WarmPool::Take(const std::string &function, const std::string &executable) {
  auto it = functions_.find(function);
  if (closed_ || it == functions_.end() || it->second.executable != executable) return nullptr;
  Function &f = it->second;
  while (!f.idle.empty()) {
    // Returned processes wait at the front; among started ones, the oldest
    // has had the most time to finish loading its libraries.
    Process *p = f.idle.front();
    f.idle.pop_front();
    if (p->Stale()) {
      spdlog::info(
          "event=warm_stale function={} pid={} message=\"the executable file changed "
          "since this process started; retired\"",
          function, p->pid());
      p->Kill();  // live_ keeps it until reaped
      continue;
    }
    live_.erase(p);
    f.restarts.OnTaken();
    return p;
  }
  return nullptr;
}

bool WarmPool::Return(Process *process) {
  auto it = functions_.find(process->function());
  bool kept = !closed_ && !process->exited() && it != functions_.end() &&
              it->second.executable == process->executable() && !process->Stale();
  if (kept && it->second.idle.size() >= static_cast<std::size_t>(keep_))
    kept = RetireUnused(it->second);
  process->set_owner(this);
  live_.insert(process);
  if (!kept) {
    process->Kill();
    return false;
  }
  it->second.idle.push_front(process);
  return true;
}

bool WarmPool::RetireUnused(Function &f) {
  // The newest started one: the others have had longer to load.
  auto unused = std::find_if(f.idle.rbegin(), f.idle.rend(),
                             [](const Process *p) { return p->calls_served() == 0; });
  if (unused == f.idle.rend()) return false;
  Process *p = *unused;
  f.idle.erase(std::next(unused).base());
  p->Kill();  // live_ keeps it until reaped, as every process killed on purpose
  return true;
}

void WarmPool::Arm(const std::string &function, const std::string &executable) {
  // Armed even when nothing is started in advance (per_function 0): reused
  // executables come back to armed functions only.
  if (closed_) return;
  Function &f = functions_[function];
  if (f.executable != executable) {
    // Never the case without a reload in between (Clear forgets), but an
    // idle process of another program must not serve this function.
    for (Process *p : f.idle) p->Kill();
    f = Function{};
    f.executable = executable;
  }
}

void WarmPool::Replenish(const std::string &function, const std::string &executable) {
  Arm(function, executable);
  if (closed_ || per_function_ <= 0) return;
  Function &f = functions_[function];
  while (!f.restarts.given_up() && f.idle.size() < static_cast<std::size_t>(per_function_))
    if (!SpawnOne(function, f)) break;
}

void WarmPool::Refill(const std::string &function) {
  auto it = functions_.find(function);
  if (it != functions_.end()) Replenish(function, it->second.executable);
}

bool WarmPool::SpawnOne(const std::string &name, Function &f) {
  Process *p = nullptr;
  Status st = hooks_.spawn(name, f.executable, this, &p);
  if (!st.ok()) {
    spdlog::warn("event=warm_spawn_failed function={} error={}", name,
                 daemon::Quoted(st.message()));
    NoteGiveUp(name, f, f.restarts.OnSpawnFailed());
    return false;
  }
  live_.insert(p);
  f.idle.push_back(p);
  spdlog::debug("event=warm_start function={} pid={} idle={}", name, p->pid(), f.idle.size());
  if (hooks_.spawned) hooks_.spawned(*p);
  return true;
}

void WarmPool::NoteDeath(const std::string &name, Function &f, Clock::duration age) {
  NoteGiveUp(name, f, f.restarts.OnIdleDeath(age));
}

void WarmPool::NoteGiveUp(const std::string &name, Function &f, bool gave_up) {
  if (gave_up)
    spdlog::warn(
        "event=warm_give_up function={} early_deaths={} message=\"its executable keeps dying "
        "before a call; its calls start cold until the registry is reloaded\"",
        name, f.restarts.early_deaths());
  ScheduleRestarts();
}

void WarmPool::Discard(Process *process) {
  process->set_owner(this);
  if (process->exited()) {
    process->Close();
    return;
  }
  live_.insert(process);
  process->Kill();
}

void WarmPool::OnControl(Process &process, const ControlMsg &msg, daemon::UniqueFd) {
  // A process waiting for its hand-off has nothing to say: it is broken.
  spdlog::warn("event=warm_unexpected_control function={} pid={} kind={}", process.function(),
               process.pid(), msg.kind);
  process.Kill();
}

void WarmPool::OnExit(Process &process) {
  live_.erase(&process);
  const std::string name = process.function();
  const int pid = process.pid();
  const std::string exit = process.ExitDescription();
  const Clock::duration age = Clock::now() - process.spawned_at();
  bool was_idle = false;
  auto it = functions_.find(name);
  if (it != functions_.end()) {
    auto &idle = it->second.idle;
    auto pos = std::find(idle.begin(), idle.end(), &process);
    was_idle = pos != idle.end();
    if (was_idle) idle.erase(pos);
  }
  process.Close();
  if (was_idle) {
    spdlog::warn("event=warm_exit function={} pid={} exit={} age_seconds={:.3f}", name, pid,
                 daemon::Quoted(exit), std::chrono::duration<double>(age).count());
    NoteDeath(name, it->second, age);
  } else {  // killed on purpose: discarded, cleared or shut down
    spdlog::debug("event=warm_end function={} pid={} exit={}", name, pid, daemon::Quoted(exit));
  }
  if (hooks_.reaped) hooks_.reaped();
}

void WarmPool::ScheduleRestarts() {
  if (closed_) return;
  std::optional<Clock::time_point> due;
  for (auto &[name, f] : functions_)
    if (auto d = f.restarts.Due(); d && (!due || *d < *due)) due = d;
  if (!due) {
    uv_timer_stop(&timer_);
    return;
  }
  const Clock::time_point now = Clock::now();
  const int64_t wait =
      *due <= now ? 0 : std::chrono::ceil<std::chrono::milliseconds>(*due - now).count();
  uv_timer_start(
      &timer_, [](uv_timer_t *t) { static_cast<WarmPool *>(t->data)->RunRestarts(); },
      static_cast<uint64_t>(wait), 0);
}

void WarmPool::RunRestarts() {
  const Clock::time_point now = Clock::now();
  for (auto &[name, f] : functions_)
    if (f.restarts.TakeRestart(now) && f.idle.size() < static_cast<std::size_t>(per_function_))
      SpawnOne(name, f);  // a failure counts as an early death
  ScheduleRestarts();
}

void WarmPool::Clear() {
  for (auto &[name, f] : functions_)
    for (Process *p : f.idle) p->Kill();  // live_ keeps them until reaped
  functions_.clear();
  uv_timer_stop(&timer_);
}

void WarmPool::Close() {
  if (closed_) return;
  Clear();
  closed_ = true;
  uv_close(reinterpret_cast<uv_handle_t *>(&timer_), nullptr);
}

std::size_t WarmPool::idle() const {
  std::size_t n = 0;
  for (const auto &[name, f] : functions_) n += f.idle.size();
  return n;
}

std::size_t WarmPool::idle(const std::string &function) const {
  auto it = functions_.find(function);
  return it == functions_.end() ? 0 : it->second.idle.size();
}

}  // namespace ninf::server
