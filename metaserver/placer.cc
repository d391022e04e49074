#include "metaserver/placer.h"

#include <spdlog/spdlog.h>
#include <sys/random.h>

#include <algorithm>
#include <chrono>

#include "daemon/log.h"

namespace ninf::meta {
namespace {

using daemon::Quoted;

// `ranked` with the block plan's server first, when the request names one
// (PlaceRequest.prefer_server_id) and it is still a candidate.
std::vector<uint32_t> PreferPlan(const wire::PlaceRequest &req, const ServerTable::Choices &choices,
                                 const CallShape &shape, std::vector<uint32_t> ranked) {
  if (req.prefer_server_id().empty()) return ranked;
  for (uint32_t i = 0; i < choices.servers.size(); ++i)
    if (choices.servers[i]->reg.id == req.prefer_server_id())
      return PreferPlanned(std::move(ranked), choices.candidates, shape, i, req.prefer_margin());
  return ranked;  // gone, or excluded after a failure: the policy's choice
}

// A ticket nobody can guess from the ones they were given (issue 28, H6).
uint64_t RandomTicket() {
  uint64_t t = 0;
  while (t == 0) {
    if (::getrandom(&t, sizeof t, 0) != static_cast<ssize_t>(sizeof t)) {
      // No entropy source: the address space layout and the clock still
      // vary; getrandom does not fail on Linux >= 3.17 in practice.
      t = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
          reinterpret_cast<uintptr_t>(&t);
    }
  }
  return t;
}

}  // namespace

Placer::Answer Placer::Place(const wire::PlaceRequest &req, const std::string &site,
                             const std::string &reporter, double now) {
  Answer answer;
  const std::vector<std::string> exclude(req.exclude().begin(), req.exclude().end());
  const Link fallback{static_cast<double>(settings_.default_latency_us) / 1e6,
                      static_cast<double>(settings_.default_bandwidth)};
  ServerTable::Choices choices =
      table_.Candidates(req.function(), site, exclude, fallback, reporter);
  if (choices.candidates.empty()) {
    bool anywhere = !table_.Candidates(req.function(), site, {}, fallback).candidates.empty();
    answer.error =
        anywhere
            ? Status(NINF_ERR_SERVER, "every server of '" + req.function() + "' failed this call")
            : Status(NINF_ERR_FUNCTION_NOT_FOUND,
                     "no server registered with ninf-meta serves '" + req.function() + "'");
    return answer;
  }
  wire::Placement &reply = answer.reply;
  reply.set_site(site);
  reply.set_policy(std::string(PolicyName(policy_)));
  // Only the completion policy reads links.
  if (policy_ == Policy::kCompletion && !req.no_probe() &&
      AskProbes(site, reporter, choices, now, &reply)) {
    answer.outcome = Outcome::kProbe;
    return answer;
  }
  if (policy_ == Policy::kCompletion && req.no_probe()) NoteUnprobed(site, reporter, choices, now);
  const CallShape shape{std::max(0.0, req.work_flops()), req.in_bytes(), req.out_bytes()};
  const std::vector<uint32_t> ranked = RankTargets(req, choices, shape, &reply);
  // A breakdown plans a block; each call of it is placed (and reserved)
  // again when it becomes ready.
  if (req.breakdown()) {
    answer.outcome = Outcome::kBreakdown;
    return answer;
  }
  Reserve(req, site, reporter, choices, shape, ranked.front(), now, &reply);
  answer.outcome = Outcome::kPlaced;
  return answer;
}

bool Placer::AskProbes(const std::string &site, const std::string &reporter,
                       const ServerTable::Choices &choices, double now, wire::Placement *reply) {
  // A link it knows nothing of, or nothing recent, is probed by the client
  // before it decides, unless another client of the same reporter and site
  // was asked to a moment ago (LinkModel::ShouldAskProbe): then this one is
  // placed on what is known.
  const double max_age = static_cast<double>(settings_.probe_seconds);
  const double wait = static_cast<double>(settings_.probe_wait_seconds);
  for (std::size_t i = 0; i < choices.servers.size(); ++i) {
    const ServerEntry &e = *choices.servers[i];
    const LinkModel *known = table_.FindLink(site, reporter, e.reg.address);
    if (known && !known->ShouldAskProbe(now, max_age, wait)) continue;
    table_.LinkTo(site, reporter, e.reg.address).ProbeAsked(now);
    wire::PlacementTarget *t = reply->add_probe();
    t->set_server_id(e.reg.id);
    t->set_address(e.reg.address);
  }
  if (reply->probe_size() == 0) return false;
  reply->set_probe_small_bytes(static_cast<uint64_t>(settings_.probe_small_bytes));
  reply->set_probe_large_bytes(static_cast<uint64_t>(settings_.probe_large_bytes));
  return true;
}

void Placer::NoteUnprobed(const std::string &site, const std::string &reporter,
                          const ServerTable::Choices &choices, double now) {
  // A client back from its probes: a link it was asked to probe and left
  // without a sample is asked of the next client at once.
  const double max_age = static_cast<double>(settings_.probe_seconds);
  for (const ServerEntry *e : choices.servers) {
    const LinkModel *known = table_.FindLink(site, reporter, e->reg.address);
    if (known && known->NeedsProbe(now, max_age))
      table_.LinkTo(site, reporter, e->reg.address).ProbeFailed();
  }
}

std::vector<uint32_t> Placer::RankTargets(const wire::PlaceRequest &req,
                                          const ServerTable::Choices &choices,
                                          const CallShape &shape, wire::Placement *reply) {
  const std::size_t limit =
      req.breakdown() ? choices.candidates.size()
                      : std::clamp<std::size_t>(req.limit(), 1,
                                                static_cast<std::size_t>(settings_.retries) + 1);
  std::vector<uint32_t> ranked = Rank(policy_, choices.candidates, shape, limit, &state_);
  ranked = PreferPlan(req, choices, shape, std::move(ranked));
  if (ranked.size() > limit) ranked.resize(limit);
  for (uint32_t index : ranked) {
    const ServerEntry &e = *choices.servers[index];
    wire::PlacementTarget *t = reply->add_targets();
    t->set_server_id(e.reg.id);
    t->set_address(e.reg.address);
    const Candidate &c = choices.candidates[index];
    const Prediction p = Predict(c, shape);
    t->set_predicted_seconds(p.total());
    if (!req.breakdown()) continue;
    t->set_queue_seconds(p.queue);
    t->set_compute_seconds(p.compute + p.startup);
    t->set_latency_seconds(c.link.latency_seconds);
    t->set_bandwidth(c.link.bandwidth_bytes_per_second);
    t->set_slots(static_cast<uint32_t>(c.load.slots));
  }
  return ranked;
}

void Placer::Reserve(const wire::PlaceRequest &req, const std::string &site,
                     const std::string &reporter, const ServerTable::Choices &choices,
                     const CallShape &shape, uint32_t first, double now, wire::Placement *reply) {
  const uint64_t ticket = RandomTicket();
  reply->set_ticket(ticket);
  const std::string first_id = choices.servers[first]->reg.id;
  Prediction p = Predict(choices.candidates[first], shape);
  table_.Reserve(first_id, ticket, p.compute + p.startup, now, reporter);
  spdlog::debug(
      "event=placed ticket={} function={} site={} server={} predicted_seconds={:.4f} "
      "queue={:.4f} transfer={:.4f} compute={:.4f} candidates={}",
      ticket, Quoted(req.function()), Quoted(site), first_id, p.total(), p.queue,
      p.latency + p.send + p.receive, p.compute, choices.candidates.size());
}

}  // namespace ninf::meta
