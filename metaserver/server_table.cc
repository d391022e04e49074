#include "metaserver/server_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ninf::meta {
namespace {

// "" when `v` is finite and within [lo, hi], else "FIELD: why".
std::string CheckRange(const char *field, double v, double lo, double hi) {
  if (std::isfinite(v) && v >= lo && v <= hi) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s: %g is not a finite number in [%g, %g]", field, v, lo, hi);
  return buf;
}

}  // namespace

std::string CheckRegistration(const Registration &reg) {
  for (std::string err :
       {CheckRange("slots", reg.slots, 1, kMaxSlots), CheckRange("cores", reg.cores, 1, kMaxSlots),
        CheckRange("flops_per_second", reg.flops_per_second, 0, kMaxFlopsPerSecond),
        CheckRange("startup_seconds", reg.startup_seconds, 0, kMaxSeconds),
        CheckRange("lease_ms", reg.lease_seconds * 1000, 0, kMaxSeconds * 1000)})
    if (!err.empty()) return err;
  return "";
}

std::string CheckLoad(const LoadSample &s) {
  for (std::string err : {CheckRange("running", s.running, 0, kMaxCalls),
                          CheckRange("queued", s.queued, 0, kMaxCalls),
                          CheckRange("arriving", s.arriving, 0, kMaxCalls),
                          CheckRange("arrival_waiting", s.arrival_waiting, 0, kMaxCalls),
                          CheckRange("work_seconds", s.work_seconds, 0, kMaxWorkSeconds),
                          CheckRange("load_average", s.load_average, 0, kMaxLoadAverage),
                          CheckRange("startup_seconds", s.startup_seconds, 0, kMaxSeconds)})
    if (!err.empty()) return err;
  for (const FunctionSample &f : s.functions)
    for (std::string err :
         {CheckRange("functions.mean_seconds", f.mean_seconds, 0, kMaxSeconds),
          CheckRange("functions.flops_per_second", f.flops_per_second, 0, kMaxFlopsPerSecond)})
      if (!err.empty()) return err + " (function '" + f.name.substr(0, 64) + "')";
  return "";
}

ServerLoad ServerEntry::Load() const {
  ServerLoad load;
  load.slots = static_cast<int>(std::clamp<uint32_t>(reg.slots, 1, kMaxSlots));
  load.running = static_cast<int>(std::min(last.running, kMaxCalls));
  load.queued = static_cast<int>(std::min(last.queued, kMaxCalls));
  load.work_seconds = last.work_seconds;
  load.reserved_calls = static_cast<int>(reservations.size());
  for (const Reservation &r : reservations) load.reserved_seconds += r.seconds;
  return load;
}

bool ServerEntry::Serves(std::string_view function) const {
  return std::binary_search(reg.functions.begin(), reg.functions.end(), function);
}

std::string_view ServerEntry::InterfaceOf(std::string_view function) const {
  auto it = reg.interfaces.find(function);
  return it == reg.interfaces.end() ? std::string_view() : std::string_view(it->second);
}

bool ServerTable::Register(Registration reg, double now) {
  bool replaced = servers_.erase(reg.id) > 0;
  for (auto it = servers_.begin(); it != servers_.end();) {
    if (it->second.reg.address == reg.address) {
      it = servers_.erase(it);
      replaced = true;
    } else {
      ++it;
    }
  }
  ServerEntry entry;
  entry.registered_at = now;
  entry.heard_at = now;
  std::sort(reg.functions.begin(), reg.functions.end());
  reg.functions.erase(std::unique(reg.functions.begin(), reg.functions.end()), reg.functions.end());
  entry.reg = std::move(reg);
  std::string id = entry.reg.id;
  servers_.emplace(std::move(id), std::move(entry));
  return replaced;
}

bool ServerTable::Report(std::string_view id, LoadSample sample, double now, std::size_t *ignored) {
  auto it = servers_.find(id);
  if (it == servers_.end()) return false;
  ServerEntry &e = it->second;
  // Calls admitted since the last report are now counted in running and
  // queued: they cover that many of the oldest reservations.
  if (e.reports > 0 && sample.calls_admitted > e.last.calls_admitted) {
    uint64_t covered = sample.calls_admitted - e.last.calls_admitted;
    while (covered-- > 0 && !e.reservations.empty()) e.reservations.pop_front();
  }
  // Only the functions of its registration: a report naming others would
  // otherwise grow the entry without bound (issue 28, H7).
  std::size_t dropped = 0;
  for (FunctionSample &f : sample.functions) {
    if (e.Serves(f.name))
      e.functions[f.name] = std::move(f);
    else
      ++dropped;
  }
  sample.functions.clear();
  if (ignored) *ignored = dropped;
  if (sample.startup_seconds > 0) e.reg.startup_seconds = sample.startup_seconds;
  e.last = std::move(sample);
  e.heard_at = now;
  ++e.reports;
  ExpireReservations(e, now);
  return true;
}

bool ServerTable::Drop(std::string_view id) {
  auto it = servers_.find(id);
  if (it == servers_.end()) return false;
  servers_.erase(it);
  return true;
}

std::vector<std::string> ServerTable::Expire(double now) {
  std::vector<std::string> gone;
  for (auto it = servers_.begin(); it != servers_.end();) {
    if (now - it->second.heard_at > it->second.reg.lease_seconds) {
      gone.push_back(it->first);
      it = servers_.erase(it);
    } else {
      ExpireReservations(it->second, now);
      ++it;
    }
  }
  return gone;
}

void ServerTable::ExpireReservations(ServerEntry &entry, double now) const {
  while (!entry.reservations.empty() && now - entry.reservations.front().at > reservation_seconds_)
    entry.reservations.pop_front();
}

const ServerEntry *ServerTable::InterfaceOwner(std::string_view function) const {
  const ServerEntry *owner = nullptr;
  for (const auto &[id, e] : servers_)
    if (e.Serves(function) && (!owner || e.registered_at < owner->registered_at)) owner = &e;
  return owner;
}

std::vector<std::string> ServerTable::Conflicts(std::string_view id) const {
  std::vector<std::string> out;
  const ServerEntry *e = Find(id);
  if (!e) return out;
  for (const std::string &f : e->reg.functions) {
    const ServerEntry *owner = InterfaceOwner(f);
    if (owner && owner->InterfaceOf(f) != e->InterfaceOf(f)) out.push_back(f);
  }
  return out;
}

ServerTable::Choices ServerTable::Candidates(std::string_view function, std::string_view site,
                                             std::span<const std::string> exclude,
                                             const Link &fallback,
                                             std::string_view reporter) const {
  Choices out;
  const ServerEntry *owner = InterfaceOwner(function);
  if (!owner) return out;
  const std::string_view iface = owner->InterfaceOf(function);
  for (const auto &[id, e] : servers_) {
    if (!e.Serves(function) || e.InterfaceOf(function) != iface) continue;
    if (std::find(exclude.begin(), exclude.end(), id) != exclude.end()) continue;
    Candidate c;
    c.server = static_cast<uint32_t>(out.candidates.size());
    c.load = e.Load();
    c.link = fallback;
    bool known = false;
    if (const LinkModel *l = FindLink(site, reporter, e.reg.address)) {
      LinkModel::Estimate est = l->Current();
      if (est.bandwidth_bytes_per_second > 0) {
        c.link = {est.latency_seconds, est.bandwidth_bytes_per_second};
        known = true;
      }
    }
    // "name@relay:port": a reverse server. Its relay leg is never measured
    // on its own; a link measured through the relay already holds its
    // bandwidth, but not the dial-back's round trip.
    if (e.reg.address.find('@') != std::string::npos) {
      c.relayed = true;
      c.relay_leg = {fallback.latency_seconds, known ? 0.0 : fallback.bandwidth_bytes_per_second};
    }
    c.flops_per_second = e.reg.flops_per_second;
    c.startup_seconds = e.reg.startup_seconds;
    if (auto f = e.functions.find(function); f != e.functions.end()) {
      // Both figures only once they rest on a few calls (kTrustedSpeedCalls):
      // a cold first call alone must not keep the server from being tried.
      if (f->second.calls >= kTrustedSpeedCalls) {
        if (f->second.flops_per_second > 0) c.flops_per_second = f->second.flops_per_second;
        c.service_seconds = f->second.mean_seconds;
      }
      c.warm = f->second.warm;
    }
    out.candidates.push_back(c);
    out.servers.push_back(&e);
    out.link_known.push_back(known);
  }
  return out;
}

void ServerTable::Reserve(std::string_view id, uint64_t ticket, double seconds, double now,
                          std::string_view owner) {
  auto it = servers_.find(id);
  if (it == servers_.end()) return;
  ExpireReservations(it->second, now);
  it->second.reservations.push_back({ticket, seconds, now, std::string(owner)});
  ++it->second.placements;
}

ServerTable::Released ServerTable::Release(std::string_view id, uint64_t ticket,
                                           std::string_view owner) {
  auto it = servers_.find(id);
  if (it == servers_.end()) return Released::kUnknown;
  auto &rs = it->second.reservations;
  auto r = std::find_if(rs.begin(), rs.end(),
                        [ticket](const ServerEntry::Reservation &x) { return x.ticket == ticket; });
  if (r == rs.end()) return Released::kUnknown;
  if (r->owner != owner) return Released::kNotYours;
  rs.erase(r);
  return Released::kYes;
}

LinkModel &ServerTable::LinkTo(std::string_view site, std::string_view reporter,
                               std::string_view address) {
  LinkKey key{std::string(site), std::string(reporter), std::string(address)};
  auto it = links_.find(key);
  if (it != links_.end()) {
    // Most recently used: to the front of both lists.
    by_use_.splice(by_use_.begin(), by_use_, it->second.use);
    auto &mine = by_reporter_[std::get<1>(it->first)];
    mine.splice(mine.begin(), mine, it->second.reporter_use);
    return it->second.model;
  }
  // Room first: the reporter's own oldest, then the oldest of all.
  for (auto mine = by_reporter_.find(reporter);
       max_links_per_reporter_ > 0 && mine != by_reporter_.end() &&
       mine->second.size() >= max_links_per_reporter_;
       mine = by_reporter_.find(reporter))
    EvictLink(LinkKey(mine->second.back()));
  while (max_links_ > 0 && links_.size() >= max_links_) EvictLink(LinkKey(by_use_.back()));
  auto &list = by_reporter_[std::string(reporter)];
  by_use_.push_front(key);
  list.push_front(key);
  LinkSlot &slot = links_[std::move(key)];
  slot.use = by_use_.begin();
  slot.reporter_use = list.begin();
  return slot.model;
}

void ServerTable::EvictLink(const LinkKey &key) {
  auto it = links_.find(key);
  if (it == links_.end()) return;
  by_use_.erase(it->second.use);
  auto mine = by_reporter_.find(std::get<1>(key));
  if (mine != by_reporter_.end()) {
    mine->second.erase(it->second.reporter_use);
    if (mine->second.empty()) by_reporter_.erase(mine);
  }
  links_.erase(it);
  ++links_evicted_;
}

const LinkModel *ServerTable::FindLink(std::string_view site, std::string_view reporter,
                                       std::string_view address) const {
  auto it = links_.find(LinkKey{std::string(site), std::string(reporter), std::string(address)});
  return it == links_.end() ? nullptr : &it->second.model;
}

const ServerEntry *ServerTable::Find(std::string_view id) const {
  auto it = servers_.find(id);
  return it == servers_.end() ? nullptr : &it->second;
}

}  // namespace ninf::meta
