// One PLACE request answered: the servers that serve the function, the
// links the client is to probe first, the ranked targets and the
// reservation on the first. The decisions are placement.h's; the placer
// asks and updates the server table, and tells ninf-meta what happened so
// that the daemon counts it (MetaServer::HandlePlace).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metaserver/meta_settings.h"
#include "metaserver/placement.h"
#include "metaserver/server_table.h"
#include "ninf.pb.h"
#include "protocol/status.h"

namespace ninf::meta {

class Placer {
 public:
  // All outlive the placer: the daemon's settings, its policy and the
  // policy's state, its server table.
  Placer(const MetaSettings &settings, const Policy &policy, PolicyState &state, ServerTable &table)
      : settings_(settings), policy_(policy), state_(state), table_(table) {}

  enum class Outcome {
    kUnserved,   // no server (left) for the function: `error` says which
    kProbe,      // the client is to probe links first: the reply lists them
    kBreakdown,  // a block's plan: every candidate ranked, nothing reserved
    kPlaced,     // ranked targets, the first reserved under the reply's ticket
  };
  struct Answer {
    Outcome outcome = Outcome::kUnserved;
    Status error;
    wire::Placement reply;
  };

  // `site` is the client's (checked), `reporter` who asks (links and
  // tickets are its own), `now` the daemon's clock.
  Answer Place(const wire::PlaceRequest &req, const std::string &site, const std::string &reporter,
               double now);

 private:
  // The links the client is to probe first (true: asked, *reply holds them).
  bool AskProbes(const std::string &site, const std::string &reporter,
                 const ServerTable::Choices &choices, double now, wire::Placement *reply);
  // A client back from its probes: links it left without a sample.
  void NoteUnprobed(const std::string &site, const std::string &reporter,
                    const ServerTable::Choices &choices, double now);
  // The servers ranked into *reply's targets (their indexes, best first).
  std::vector<uint32_t> RankTargets(const wire::PlaceRequest &req,
                                    const ServerTable::Choices &choices, const CallShape &shape,
                                    wire::Placement *reply);
  // The reservation on the first target, under a new ticket.
  void Reserve(const wire::PlaceRequest &req, const std::string &site, const std::string &reporter,
               const ServerTable::Choices &choices, const CallShape &shape, uint32_t first,
               double now, wire::Placement *reply);

  const MetaSettings &settings_;
  const Policy &policy_;
  PolicyState &state_;
  ServerTable &table_;
};

}  // namespace ninf::meta
