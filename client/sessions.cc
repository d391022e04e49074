#include "sessions.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

namespace ninf::client {

struct Sessions::Entry {
  std::unique_ptr<RemoteCall> call;
  std::thread worker;
  bool done = false;
  Status result;
};

namespace {

std::mutex g_mutex;
std::condition_variable g_changed;
std::map<int, std::shared_ptr<Sessions::Entry>> *g_entries = nullptr;
int g_next_id = 0;

std::map<int, std::shared_ptr<Sessions::Entry>> &Entries() {
  // Never destroyed: calls may still be running while the program exits.
  if (!g_entries) g_entries = new std::map<int, std::shared_ptr<Sessions::Entry>>();
  return *g_entries;
}

// Takes a finished entry out of the table; the caller holds g_mutex.
Status Collect(int id, std::unique_lock<std::mutex> &lock) {
  auto it = Entries().find(id);
  std::shared_ptr<Sessions::Entry> e = it->second;
  Entries().erase(it);
  lock.unlock();
  e->worker.join();
  return e->result;
}

}  // namespace

Sessions &Sessions::Instance() {
  static Sessions *instance = new Sessions();
  return *instance;
}

int Sessions::Start(std::unique_ptr<RemoteCall> call) {
  auto e = std::make_shared<Entry>();
  e->call = std::move(call);
  std::lock_guard<std::mutex> lock(g_mutex);
  int id = g_next_id++;
  if (g_next_id < 0) g_next_id = 0;  // wrapped after 2^31 calls
  Entries()[id] = e;
  e->worker = std::thread([e] {
    Status st = e->call->Execute();
    e->call.reset();  // closes the connection now, not at wait time
    std::lock_guard<std::mutex> inner(g_mutex);
    e->result = st;
    e->done = true;
    g_changed.notify_all();
  });
  return id;
}

Status Sessions::Wait(int id) {
  std::unique_lock<std::mutex> lock(g_mutex);
  auto it = Entries().find(id);
  if (it == Entries().end()) return Status(NINF_ERR_INVALID_ID, "no outstanding call with id " + std::to_string(id));
  std::shared_ptr<Entry> e = it->second;
  g_changed.wait(lock, [&] { return e->done; });
  return Collect(id, lock);
}

Status Sessions::WaitAny(int *id) {
  std::unique_lock<std::mutex> lock(g_mutex);
  *id = -1;
  if (Entries().empty()) return Status(NINF_ERR_INVALID_ID, "no outstanding calls");
  int found = -1;
  g_changed.wait(lock, [&] {
    for (auto &[key, e] : Entries())
      if (e->done) {
        found = key;
        return true;
      }
    return false;
  });
  *id = found;
  return Collect(found, lock);
}

std::vector<int> Sessions::Outstanding() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<int> ids;
  for (auto &kv : Entries()) ids.push_back(kv.first);
  return ids;
}

}  // namespace ninf::client
