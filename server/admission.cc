#include "server/admission.h"

#include <algorithm>
#include <cassert>

namespace ninf::server {

bool ParseThreadBudget(std::string_view text, ThreadBudget *out) {
  if (text == "fixed")
    *out = ThreadBudget::kFixed;
  else if (text == "split")
    *out = ThreadBudget::kSplit;
  else if (text == "adaptive")
    *out = ThreadBudget::kAdaptive;
  else
    return false;
  return true;
}

bool ParseQueueOrder(std::string_view text, QueueOrder *out) {
  if (text == "fcfs")
    *out = QueueOrder::kFcfs;
  else if (text == "sjf")
    *out = QueueOrder::kSjf;
  else
    return false;
  return true;
}

const char *ThreadBudgetName(ThreadBudget budget) {
  switch (budget) {
    case ThreadBudget::kFixed:
      return "fixed";
    case ThreadBudget::kSplit:
      return "split";
    case ThreadBudget::kAdaptive:
      return "adaptive";
  }
  return "?";
}

const char *QueueOrderName(QueueOrder order) { return order == QueueOrder::kSjf ? "sjf" : "fcfs"; }

int ResolveSlots(int64_t slots_setting, int cores) {
  int64_t slots = slots_setting > 0 ? slots_setting : cores;
  return static_cast<int>(std::max<int64_t>(1, slots));
}

int ResolveThreadsPerJob(int64_t threads_setting, int cores, int slots) {
  if (threads_setting > 0) return static_cast<int>(threads_setting);
  return std::max(1, cores / std::max(1, slots));
}

int LoneCallThreads(const SchedulerConfig &config) {
  switch (config.budget) {
    case ThreadBudget::kFixed:
      return std::max(1, config.fixed_threads);
    case ThreadBudget::kSplit:
      return ResolveThreadsPerJob(0, config.cores, config.slots);
    case ThreadBudget::kAdaptive:
      return std::max(1, config.cores);
  }
  return 1;
}

bool IsBrief(double predicted_seconds, double recent_compute_seconds, uint64_t recent_calls) {
  if (predicted_seconds > 0) return predicted_seconds < kBriefSeconds;
  return recent_calls >= kBriefHistory && recent_compute_seconds >= 0 &&
         recent_compute_seconds < kBriefSeconds;
}

namespace {

// A call admitted as brief: never one with ranks, which hold their cores.
bool BriefCall(const CallDemand &call) { return call.brief && call.ranks == 0; }

}  // namespace

bool OutgrewBrief(int cores, double compute_seconds) {
  return cores == 0 && !(compute_seconds < kBriefSeconds);
}

int AdaptiveThreads(int cores, int threads_held, int demand) {
  const int free = cores - threads_held;
  if (free <= 0) return 0;
  const int share = std::max(1, cores / std::max(1, demand));
  return std::min(share, free);
}

Admission::Admission(const SchedulerConfig &config) : config_(config) {
  config_.cores = std::max(1, config_.cores);
  config_.slots = std::max(1, config_.slots);
  config_.fixed_threads = std::max(1, config_.fixed_threads);
}

int Admission::NoteDemand(double now, bool arriving) {
  const int present = (running_ - brief_running_) +
                      static_cast<int>(queue_.size() - brief_waiting_) + (arriving ? 1 : 0);
  // The peak is kept while it recurs within the window: a closed-loop
  // client is between two calls for a moment only.
  if (present >= peak_demand_ || now - peak_at_ > config_.demand_window_seconds) {
    peak_demand_ = present;
    peak_at_ = now;
  }
  return std::max(present, peak_demand_);
}

int Admission::ThreadsFor(double now, bool arriving, int max_threads, int ranks, bool brief) {
  // Noted even when the call must wait; a brief call is no part of it.
  const int demand = NoteDemand(now, arriving && !brief);
  if (running_ >= config_.slots) return 0;
  if (brief) return 1;
  if (ranks > 0) {  // never more ranks running than cores
    const int need = std::min(ranks, config_.cores);
    return config_.cores - threads_held_ >= need ? need : 0;
  }
  if (config_.budget != ThreadBudget::kAdaptive) return LoneCallThreads(config_);
  const int threads = AdaptiveThreads(config_.cores, threads_held_, demand);
  return max_threads > 0 ? std::min(threads, max_threads) : threads;
}

void Admission::Hold(int cores, const std::string &user) {
  ++running_;
  threads_held_ += cores;
  if (cores == 0) ++brief_running_;
  ++running_by_user_[user];
}

int Admission::running_of(const std::string &user) const {
  auto it = running_by_user_.find(user);
  return it == running_by_user_.end() ? 0 : it->second;
}

std::size_t Admission::queued_of(const std::string &user) const {
  auto it = queued_by_user_.find(user);
  return it == queued_by_user_.end() ? 0 : it->second;
}

bool Admission::AtUserCap(const std::string &user, int user_slots) const {
  return user_slots > 0 && running_of(user) >= user_slots;
}

bool Admission::EligibleWaiting(bool brief_only) const {
  for (const auto &[id, w] : waiting_)
    if ((w.brief || !brief_only) && !AtUserCap(w.user, w.user_slots)) return true;
  return false;
}

bool Admission::TryRun(const CallDemand &call, double now, int *threads, int *cores) {
  const bool brief = BriefCall(call);
  const int granted = ThreadsFor(now, true, call.max_threads, call.ranks, brief);
  // Waiting calls whose users hold their quota do not hold back others; a
  // brief call, given a free slot, passes those that wait for cores.
  if (granted <= 0 || AtUserCap(call.user, call.user_slots) || EligibleWaiting(brief)) return false;
  const int held = brief ? 0 : granted;
  Hold(held, call.user);
  *threads = granted;
  if (cores) *cores = held;
  return true;
}

Admission::Decision Admission::Offer(const CallDemand &call, double now, int *threads, int *cores) {
  if (TryRun(call, now, threads, cores)) return Decision::kRun;
  if (queue_.size() >= config_.queue_limit) return Decision::kReject;
  if (call.user_queued > 0 && queued_of(call.user) >= call.user_queued)
    return Decision::kUserQueueFull;
  const uint64_t seq = arrivals_++;
  // FCFS orders by arrival alone; SJF by arrival + predicted run time in
  // seconds since an arbitrary origin (`now`'s), ties by arrival.
  const double arrived = call.arrived >= 0 ? std::min(call.arrived, now) : now;
  const double order = config_.order == QueueOrder::kSjf
                           ? arrived + config_.sjf_aging * (std::max(0.0, call.predicted_seconds) +
                                                            std::max(0.0, call.transfer_seconds))
                           : 0;
  const Key key{order, seq, call.id};
  queue_.insert(key);
  const bool brief = BriefCall(call);
  waiting_[call.id] = Waiting{key, call.max_threads, call.ranks, call.user, call.user_slots, brief};
  ++queued_by_user_[call.user];
  if (brief) ++brief_waiting_;
  return Decision::kQueue;
}

Admission::Decision Admission::Precheck(const CallDemand &call, std::size_t arriving,
                                        std::size_t user_arriving) const {
  // It could start at once: no refusal whatever the queue holds.
  if (running_ + static_cast<int>(arriving) < config_.slots && queue_.empty() &&
      !AtUserCap(call.user, call.user_slots))
    return Decision::kRun;
  if (queue_.size() + arriving >= config_.queue_limit) return Decision::kReject;
  if (call.user_queued > 0 && queued_of(call.user) + user_arriving >= call.user_queued)
    return Decision::kUserQueueFull;
  return Decision::kQueue;
}

void Admission::Release(int cores, const std::string &user) {
  assert(running_ > 0 && threads_held_ >= cores);
  if (running_ > 0) --running_;
  if (cores == 0 && brief_running_ > 0) --brief_running_;
  threads_held_ = std::max(0, threads_held_ - cores);
  if (auto it = running_by_user_.find(user); it != running_by_user_.end() && --it->second <= 0)
    running_by_user_.erase(it);
}

std::optional<Grant> Admission::Next(double now) {
  // The first call in order whose user is under its quota; calls of users
  // at their quota keep their place for later. Once the first call that
  // needs cores finds none, only brief calls may pass it (with a slot free):
  // they take none of its cores.
  bool cores_short = false;
  for (auto key = queue_.begin(); key != queue_.end(); ++key) {
    const uint64_t id = std::get<2>(*key);
    const Waiting &w = waiting_.at(id);
    if (AtUserCap(w.user, w.user_slots) || (cores_short && !w.brief)) continue;
    const int granted = ThreadsFor(now, false, w.max_threads, w.ranks, w.brief);
    if (granted <= 0) {
      if (running_ >= config_.slots) return std::nullopt;  // no slot: nobody goes
      cores_short = true;
      continue;
    }
    const std::string user = w.user;
    const int cores = w.brief ? 0 : granted;
    queue_.erase(key);
    Forget(id);
    Hold(cores, user);
    return Grant{id, granted, cores};
  }
  return std::nullopt;
}

void Admission::Forget(uint64_t id) {
  auto it = waiting_.find(id);
  if (it == waiting_.end()) return;
  if (it->second.brief && brief_waiting_ > 0) --brief_waiting_;
  if (auto q = queued_by_user_.find(it->second.user);
      q != queued_by_user_.end() && --q->second == 0)
    queued_by_user_.erase(q);
  waiting_.erase(it);
}

bool Admission::Withdraw(uint64_t id) {
  auto it = waiting_.find(id);
  if (it == waiting_.end()) return false;
  queue_.erase(it->second.key);
  Forget(id);
  return true;
}

std::vector<uint64_t> Admission::TakeQueue() {
  std::vector<uint64_t> out;
  for (const Key &key : queue_) out.push_back(std::get<2>(key));
  queue_.clear();
  waiting_.clear();
  queued_by_user_.clear();
  brief_waiting_ = 0;
  return out;
}

double TransferSecondsAhead(uint64_t result_bytes, uint64_t received_bytes,
                            double receive_seconds) {
  // Below these the arguments were in the socket's buffer already: their
  // "rate" is a memory copy's and would predict nothing about the link.
  constexpr uint64_t kMinBytes = 256 * 1024;
  constexpr double kMinSeconds = 0.005;
  if (result_bytes == 0 || received_bytes < kMinBytes || !(receive_seconds >= kMinSeconds))
    return 0;
  return static_cast<double>(result_bytes) * receive_seconds / static_cast<double>(received_bytes);
}

bool ParseAdmissionOrder(std::string_view text, AdmissionOrder *out) {
  if (text == "arrival")
    *out = AdmissionOrder::kArrival;
  else if (text == "start")
    *out = AdmissionOrder::kStart;
  else
    return false;
  return true;
}

const char *AdmissionOrderName(AdmissionOrder order) {
  return order == AdmissionOrder::kStart ? "start" : "arrival";
}

bool ArrivesFirst(const ArrivalFacts &f) {
  return f.order == AdmissionOrder::kArrival && !f.two_phase && f.direct_launch && !f.redirected;
}

ArrivalBounds ResolveArrivalBounds(int64_t limit, int64_t bytes, int64_t client_limit,
                                   int64_t client_bytes, uint64_t memory_bytes) {
  ArrivalBounds b;
  b.calls = static_cast<std::size_t>(std::max<int64_t>(1, limit));
  b.bytes = bytes > 0 ? static_cast<uint64_t>(bytes) : std::max<uint64_t>(1, memory_bytes / 4);
  b.client_calls = client_limit > 0 ? static_cast<std::size_t>(client_limit) : b.calls;
  b.client_bytes =
      client_bytes > 0 ? static_cast<uint64_t>(client_bytes) : std::max<uint64_t>(1, b.bytes / 4);
  return b;
}

bool MayArrive(const ArrivalLoad &held, uint64_t bytes, std::size_t max_calls, uint64_t max_bytes) {
  if (held.calls == 0) return true;
  if (max_calls > 0 && held.calls >= max_calls) return false;
  return max_bytes == 0 || (held.bytes <= max_bytes && bytes <= max_bytes - held.bytes);
}

uint64_t ChargedArrivalBytes(bool known, uint64_t frame_bytes, const ArrivalBounds &bounds) {
  if (known) return frame_bytes;
  if (bounds.bytes == 0) return 0;
  return bounds.bytes / std::max<std::size_t>(1, bounds.calls);
}

uint64_t ReportedArrivalBytes(uint64_t reported, int64_t max_call_bytes) {
  constexpr uint64_t kNeverWraps = uint64_t{1} << 48;  // 256 TiB: far above any call
  const uint64_t limit = max_call_bytes > 0
                             ? std::min(static_cast<uint64_t>(max_call_bytes), kNeverWraps)
                             : kNeverWraps;
  return std::min(reported, limit);
}

ArrivalLoad ArrivalGate::held_of(const std::string &client) const {
  auto it = by_client_.find(client);
  return it == by_client_.end() ? ArrivalLoad{} : it->second;
}

bool ArrivalGate::Fits(const Call &call, const ArrivalBounds &b, bool *client_blocked) const {
  *client_blocked = !MayArrive(held_of(call.client), call.bytes, b.client_calls, b.client_bytes);
  return !*client_blocked && MayArrive(held_, call.bytes, b.calls, b.bytes);
}

void ArrivalGate::Hold(const Call &call) {
  holding_[call.id] = call;
  ++held_.calls;
  held_.bytes += call.bytes;
  ArrivalLoad &mine = by_client_[call.client];
  ++mine.calls;
  mine.bytes += call.bytes;
}

bool ArrivalGate::Offer(const Call &call, const ArrivalBounds &bounds) {
  // Nobody who may go waits before it (calls blocked by their own client's
  // bound do not hold back other clients).
  bool waiting_may_go = false;
  for (const Call &w : waiting_) {
    bool client_blocked = false;
    (void)Fits(w, bounds, &client_blocked);
    if (!client_blocked) {
      waiting_may_go = true;
      break;
    }
  }
  bool client_blocked = false;
  if (!waiting_may_go && Fits(call, bounds, &client_blocked)) {
    Hold(call);
    return true;
  }
  waiting_.push_back(call);
  ++waiting_load_.calls;
  waiting_load_.bytes += call.bytes;
  return false;
}

void ArrivalGate::Done(uint64_t id) {
  auto it = holding_.find(id);
  if (it == holding_.end()) return;
  const Call &call = it->second;
  held_.calls -= 1;
  held_.bytes -= std::min(held_.bytes, call.bytes);
  if (auto c = by_client_.find(call.client); c != by_client_.end()) {
    c->second.calls -= std::min<std::size_t>(c->second.calls, 1);
    c->second.bytes -= std::min(c->second.bytes, call.bytes);
    if (c->second.calls == 0) by_client_.erase(c);
  }
  holding_.erase(it);
}

std::optional<uint64_t> ArrivalGate::Next(const ArrivalBounds &bounds) {
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    bool client_blocked = false;
    if (Fits(*it, bounds, &client_blocked)) {
      const Call call = *it;
      waiting_.erase(it);
      --waiting_load_.calls;
      waiting_load_.bytes -= std::min(waiting_load_.bytes, call.bytes);
      Hold(call);
      return call.id;
    }
    if (!client_blocked) return std::nullopt;  // the server is full: arrival order
  }
  return std::nullopt;
}

void ArrivalGate::Rehold(const Call &call) {
  if (!holds(call.id)) Hold(call);
}

bool ArrivalGate::Withdraw(uint64_t id) {
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    if (it->id != id) continue;
    --waiting_load_.calls;
    waiting_load_.bytes -= std::min(waiting_load_.bytes, it->bytes);
    waiting_.erase(it);
    return true;
  }
  return false;
}

std::vector<uint64_t> ArrivalGate::TakeWaiting() {
  std::vector<uint64_t> out;
  for (const Call &c : waiting_) out.push_back(c.id);
  waiting_.clear();
  waiting_load_ = {};
  return out;
}

}  // namespace ninf::server
