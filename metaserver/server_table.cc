#include "metaserver/server_table.h"

#include <algorithm>

namespace ninf::meta {

ServerLoad ServerEntry::Load() const {
  ServerLoad load;
  load.slots = std::max(1, reg.slots);
  load.running = last.running;
  load.queued = last.queued;
  load.work_seconds = last.work_seconds;
  load.reserved_calls = static_cast<int>(reservations.size());
  for (const Reservation &r : reservations) load.reserved_seconds += r.seconds;
  return load;
}

bool ServerEntry::Serves(std::string_view function) const {
  return std::find(reg.functions.begin(), reg.functions.end(), function) != reg.functions.end();
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
  entry.reg = std::move(reg);
  std::string id = entry.reg.id;
  servers_.emplace(std::move(id), std::move(entry));
  return replaced;
}

bool ServerTable::Report(std::string_view id, LoadSample sample, double now) {
  auto it = servers_.find(id);
  if (it == servers_.end()) return false;
  ServerEntry &e = it->second;
  // Calls admitted since the last report are now counted in running and
  // queued: they cover that many of the oldest reservations.
  if (e.reports > 0 && sample.calls_admitted > e.last.calls_admitted) {
    uint64_t covered = sample.calls_admitted - e.last.calls_admitted;
    while (covered-- > 0 && !e.reservations.empty()) e.reservations.pop_front();
  }
  for (const FunctionSample &f : sample.functions) e.functions[f.name] = f;
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

ServerTable::Choices ServerTable::Candidates(std::string_view function, std::string_view site,
                                             std::span<const std::string> exclude,
                                             const Link &fallback) const {
  Choices out;
  for (const auto &[id, e] : servers_) {
    if (!e.Serves(function)) continue;
    if (std::find(exclude.begin(), exclude.end(), id) != exclude.end()) continue;
    Candidate c;
    c.server = static_cast<uint32_t>(out.candidates.size());
    c.load = e.Load();
    c.link = fallback;
    bool known = false;
    if (auto l = links_.find({std::string(site), e.reg.address}); l != links_.end()) {
      LinkModel::Estimate est = l->second.Current();
      if (est.bandwidth_bytes_per_second > 0) {
        c.link = {est.latency_seconds, est.bandwidth_bytes_per_second};
        known = true;
      }
    }
    c.flops_per_second = e.reg.flops_per_second;
    c.startup_seconds = e.reg.startup_seconds;
    if (auto f = e.functions.find(function); f != e.functions.end()) {
      if (f->second.flops_per_second > 0) c.flops_per_second = f->second.flops_per_second;
      c.service_seconds = f->second.mean_seconds;
      c.warm = f->second.warm;
    }
    out.candidates.push_back(c);
    out.servers.push_back(&e);
    out.link_known.push_back(known);
  }
  return out;
}

void ServerTable::Reserve(std::string_view id, uint64_t ticket, double seconds, double now) {
  auto it = servers_.find(id);
  if (it == servers_.end()) return;
  ExpireReservations(it->second, now);
  it->second.reservations.push_back({ticket, seconds, now});
  ++it->second.placements;
}

void ServerTable::Release(std::string_view id, uint64_t ticket) {
  auto it = servers_.find(id);
  if (it == servers_.end()) return;
  auto &rs = it->second.reservations;
  rs.erase(
      std::remove_if(rs.begin(), rs.end(),
                     [ticket](const ServerEntry::Reservation &r) { return r.ticket == ticket; }),
      rs.end());
}

LinkModel &ServerTable::LinkTo(std::string_view site, std::string_view address) {
  return links_[{std::string(site), std::string(address)}];
}

const ServerEntry *ServerTable::Find(std::string_view id) const {
  auto it = servers_.find(id);
  return it == servers_.end() ? nullptr : &it->second;
}

}  // namespace ninf::meta
