#include "client/transaction_graph.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace ninf::client {
namespace {

// Disjoint ranges [first, second), in address order.
using Ranges = std::vector<std::pair<uintptr_t, uintptr_t>>;

bool Overlap(const ArrayUse &a, const ArrayUse &b) {
  return a.begin < b.end && b.begin < a.end && a.begin < a.end && b.begin < b.end;
}

// Moves the part of `open` inside [begin, end) to `taken`.
void Take(Ranges *open, uintptr_t begin, uintptr_t end, Ranges *taken) {
  Ranges rest;
  for (auto [a, b] : *open) {
    const uintptr_t lo = std::max(a, begin), hi = std::min(b, end);
    if (lo >= hi) {
      rest.emplace_back(a, b);
      continue;
    }
    taken->emplace_back(lo, hi);
    if (a < lo) rest.emplace_back(a, lo);
    if (hi < b) rest.emplace_back(hi, b);
  }
  std::sort(rest.begin(), rest.end());
  *open = std::move(rest);
}

// The hazard between an earlier use `a` and a later use `b`, if any;
// read-after-write ranks first, as it is the one that moves data.
bool HazardOf(const ArrayUse &a, const ArrayUse &b, Hazard *out) {
  if (!Overlap(a, b)) return false;
  if (a.writes && b.reads) return *out = Hazard::kReadAfterWrite, true;
  if (a.reads && b.writes) return *out = Hazard::kWriteAfterRead, true;
  if (a.writes && b.writes) return *out = Hazard::kWriteAfterWrite, true;
  return false;
}

// Attributes what `open` still holds to the writers before `before`, from
// the latest back, then to the client; each piece becomes a flow to `to`.
void Attribute(const std::vector<CallUses> &calls, int before, int to, Ranges open,
               std::vector<Flow> *flows) {
  for (int i = before - 1; i >= 0 && !open.empty(); --i) {
    for (const ArrayUse &w : calls[static_cast<std::size_t>(i)]) {
      if (!w.writes || w.begin >= w.end) continue;
      Ranges taken;
      Take(&open, w.begin, w.end, &taken);
      for (auto [a, b] : taken) flows->push_back({i, to, a, b});
    }
  }
  for (auto [a, b] : open) flows->push_back({kClient, to, a, b});
}

}  // namespace

std::vector<int> BlockGraph::Predecessors(int call) const {
  std::vector<int> out;
  for (const Dependency &d : dependencies)
    if (d.to == call) out.push_back(d.from);
  return out;
}

BlockGraph BuildBlockGraph(const std::vector<CallUses> &calls) {
  BlockGraph g;
  g.calls = static_cast<int>(calls.size());
  for (int j = 0; j < g.calls; ++j) {
    for (int i = 0; i < j; ++i) {
      std::optional<Hazard> found;
      for (const ArrayUse &a : calls[static_cast<std::size_t>(i)])
        for (const ArrayUse &b : calls[static_cast<std::size_t>(j)]) {
          Hazard h;
          if (HazardOf(a, b, &h) && (!found || h == Hazard::kReadAfterWrite)) found = h;
        }
      if (found) g.dependencies.push_back({i, j, *found});
    }
    for (const ArrayUse &r : calls[static_cast<std::size_t>(j)])
      if (r.reads && r.begin < r.end) Attribute(calls, j, j, Ranges{{r.begin, r.end}}, &g.flows);
  }
  // Final values: every byte written in the block, to its last writer.
  std::vector<ArrayUse> written;
  for (const CallUses &c : calls)
    for (const ArrayUse &u : c)
      if (u.writes && u.begin < u.end) written.push_back(u);
  Ranges open;
  for (const ArrayUse &u : MergeRanges(written)) open.emplace_back(u.begin, u.end);
  Attribute(calls, g.calls, kClient, std::move(open), &g.flows);
  return g;
}

std::vector<ArrayUse> MergeRanges(std::vector<ArrayUse> ranges) {
  std::erase_if(ranges, [](const ArrayUse &u) { return u.begin >= u.end; });
  std::sort(ranges.begin(), ranges.end(),
            [](const ArrayUse &a, const ArrayUse &b) { return a.begin < b.begin; });
  std::vector<ArrayUse> out;
  for (const ArrayUse &u : ranges) {
    if (!out.empty() && u.begin <= out.back().end) {
      ArrayUse &last = out.back();
      last.end = std::max(last.end, u.end);
      last.reads = last.reads || u.reads;
      last.writes = last.writes || u.writes;
    } else {
      out.push_back(u);
    }
  }
  return out;
}

}  // namespace ninf::client
