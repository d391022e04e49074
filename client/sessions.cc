#include "client/sessions.h"

#include <condition_variable>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <thread>

namespace ninf::client {

struct Sessions::Entry {
  std::function<Status()> work;
  std::function<void()> cancel;
  void *tag = nullptr;
  std::thread worker;
  bool done = false;
  bool cancelled = false;
  // Claimed by one wait: the others that waited with it (or come later)
  // are told so and never touch `worker` or `result`.
  bool collected = false;
  Status result;
};

namespace {

// Never destroyed: calls may still be running while the program exits.
struct Table {
  std::mutex mutex;
  std::condition_variable changed;
  std::map<int, std::shared_ptr<Sessions::Entry>> running;
  std::map<int, ninf_error_t> finished_codes;  // waited-for calls: id -> error code
  int next_id = 0;
};

Table &T() {
  static Table *t = new Table();
  return *t;
}

// Takes finished entry `e` (call `id`) out of the table for this waiter; the
// caller holds the lock and has checked that no other wait claimed it. Only
// the claiming waiter joins the thread and reads the result, so neither is
// ever touched twice.
Status Collect(int id, const std::shared_ptr<Sessions::Entry> &e,
               std::unique_lock<std::mutex> &lock) {
  Table &t = T();
  e->collected = true;
  auto it = t.running.find(id);
  if (it != t.running.end() && it->second == e) t.running.erase(it);
  t.finished_codes[id] = e->result.code();
  // Bounded: the oldest ids go first (after the ids wrap, at 2^31 calls,
  // the smallest are the newest for a while; a code forgotten early is
  // only an "unknown id" for a call long since waited for).
  while (t.finished_codes.size() > Sessions::kKeptCodes)
    t.finished_codes.erase(t.finished_codes.begin());
  // Other waits on this id (or on a set holding it) re-check now.
  t.changed.notify_all();
  lock.unlock();
  e->worker.join();
  return e->result;
}

Status UnknownId(int id) {
  return Status(NINF_ERR_INVALID_ID, "no outstanding call with id " + std::to_string(id));
}

// The error of every wait but the one that got the result (docs/client.md).
Status CollectedElsewhere(int id) {
  return Status(NINF_ERR_INVALID_ID,
                "call " + std::to_string(id) + " was already collected by another wait");
}

// The session thread's body: an exception from the call must end the call,
// not the process.
Status RunWork(const std::function<Status()> &work) {
  try {
    return work();
  } catch (const std::bad_alloc &) {
    return Status(NINF_ERR_NO_MEMORY, "out of memory during the call");
  } catch (const std::exception &x) {
    return Status(NINF_ERR_INTERNAL,
                  std::string("unexpected exception during the call: ") + x.what());
  }
}

}  // namespace

Sessions &Sessions::Instance() {
  static Sessions *instance = new Sessions();
  return *instance;
}

int Sessions::Start(std::function<Status()> work, std::function<void()> cancel, void *tag) {
  Table &t = T();
  auto e = std::make_shared<Entry>();
  e->work = std::move(work);
  e->cancel = std::move(cancel);
  e->tag = tag;
  std::lock_guard<std::mutex> lock(t.mutex);
  int id = t.next_id++;
  if (t.next_id < 0) t.next_id = 0;  // wrapped after 2^31 calls
  t.running[id] = e;
  try {
    e->worker = std::thread([e, &t] {
      Status st = RunWork(e->work);
      e->work = nullptr;  // closes the connection now, not at wait time
      std::lock_guard<std::mutex> inner(t.mutex);
      e->result = e->cancelled ? Status(NINF_ERR_CANCELLED, "the call was cancelled") : st;
      e->done = true;
      t.changed.notify_all();
    });
  } catch (...) {
    // No thread (std::system_error, out of memory): the session never
    // existed, so no wait may find it; the API's guard reports the cause.
    t.running.erase(id);
    throw;
  }
  return id;
}

Status Sessions::Wait(int id) {
  Table &t = T();
  std::unique_lock<std::mutex> lock(t.mutex);
  auto it = t.running.find(id);
  if (it == t.running.end())
    return t.finished_codes.count(id) ? CollectedElsewhere(id) : UnknownId(id);
  std::shared_ptr<Entry> e = it->second;
  // Every waiter of this id wakes when it ends; the first to take the lock
  // claims it, the others see `collected`.
  t.changed.wait(lock, [&] { return e->done || e->collected; });
  if (e->collected) return CollectedElsewhere(id);
  return Collect(id, e, lock);
}

Status Sessions::WaitAny(const std::vector<int> &ids, int *id) {
  Table &t = T();
  std::unique_lock<std::mutex> lock(t.mutex);
  *id = -1;
  std::vector<int> watched = ids;
  if (watched.empty())
    for (auto &kv : t.running) watched.push_back(kv.first);
  // Collected entries leave `running` at once, so "none of the set is
  // still there" means that other waits took them all: this one would
  // otherwise wait forever.
  bool any_left = false;
  int found = -1;
  std::shared_ptr<Entry> e;
  auto ready = [&] {
    any_left = false;
    for (int w : watched) {
      auto it = t.running.find(w);
      if (it == t.running.end()) continue;
      any_left = true;
      if (it->second->done) {
        found = w;
        e = it->second;
        return true;
      }
    }
    return !any_left;
  };
  if (!ready()) {
    t.changed.wait(lock, ready);
  } else if (found < 0) {
    return Status(NINF_ERR_INVALID_ID, "no outstanding calls");
  }
  if (found < 0)
    return Status(NINF_ERR_INVALID_ID, "the calls waited for were collected by other waits");
  *id = found;
  return Collect(found, e, lock);
}

Status Sessions::Probe(int id, bool *done) {
  Table &t = T();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.running.find(id);
  if (it == t.running.end()) {
    if (!t.finished_codes.count(id)) return UnknownId(id);
    *done = true;
    return Status::Ok();
  }
  *done = it->second->done;
  return Status::Ok();
}

Status Sessions::Cancel(int id) {
  Table &t = T();
  std::function<void()> cancel;
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    auto it = t.running.find(id);
    if (it == t.running.end()) return t.finished_codes.count(id) ? Status::Ok() : UnknownId(id);
    if (it->second->done) return Status::Ok();
    it->second->cancelled = true;
    cancel = it->second->cancel;
  }
  if (cancel) cancel();
  return Status::Ok();
}

void Sessions::CancelAll() {
  for (int id : Outstanding()) (void)Cancel(id);
}

Sessions::State Sessions::Result(int id, Status *result) {
  Table &t = T();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.running.find(id);
  if (it != t.running.end()) {
    if (!it->second->done) return State::kRunning;
    *result = it->second->result;
    return State::kFinished;
  }
  auto f = t.finished_codes.find(id);
  if (f == t.finished_codes.end()) return State::kUnknown;
  *result = Status(f->second, "");
  return State::kFinished;
}

void *Sessions::Tag(int id) {
  Table &t = T();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.running.find(id);
  return it == t.running.end() ? nullptr : it->second->tag;
}

std::vector<int> Sessions::Outstanding() {
  Table &t = T();
  std::lock_guard<std::mutex> lock(t.mutex);
  std::vector<int> ids;
  for (auto &kv : t.running) ids.push_back(kv.first);
  return ids;
}

void Sessions::Reset() {
  Table &t = T();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.finished_codes.clear();
}

}  // namespace ninf::client
