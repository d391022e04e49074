// What ninf-meta believes about its servers and the links to them: the
// registrations, the last load report of each server, the work assigned to
// it since (reservations), and one LinkModel per (client site, server).
//
// Leases: a server that sends nothing for its lease leaves the table
// (Expire), as does one whose connection closes (Drop). A restarted
// metaserver starts empty and is filled again by re-registrations; a server
// re-registering under a new id at the same address (a restarted ninfd)
// replaces its old entry, and keeps the history of its links, which are
// keyed by address.
//
// Reconciliation: each placement reserves its predicted work on the chosen
// server. A load report that shows k more calls admitted than the one
// before covers the k oldest reservations (those calls are now in its
// running and queued figures); an outcome report releases its own; and a
// reservation no report ever covers (the client died before calling) ends
// after `reservation_seconds`. So decisions made between reports do not
// pile onto one server, and stale ones do not keep it looking busy.
//
// Pure: no sockets, no clocks (time is passed in, in seconds), no protobuf.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "metaserver/forecast.h"
#include "metaserver/placement.h"

namespace ninf::meta {

// What ninfd says of one of its functions.
struct FunctionSample {
  std::string name;
  uint64_t calls = 0;
  double mean_seconds = 0;
  double flops_per_second = 0;
  bool warm = false;
};

struct Registration {
  std::string id;
  std::string address;  // host:port
  std::string site;
  int cores = 1;
  int slots = 1;
  double flops_per_second = 0;
  double startup_seconds = 0;
  double lease_seconds = 6;
  std::vector<std::string> functions;
};

struct LoadSample {
  int running = 0;
  int queued = 0;
  double work_seconds = 0;
  double load_average = 0;
  uint64_t calls_admitted = 0;
  double startup_seconds = 0;  // 0: keep the registered figure
  std::vector<FunctionSample> functions;
};

struct ServerEntry {
  Registration reg;
  LoadSample last;
  double registered_at = 0;
  double heard_at = 0;  // registration or last report
  uint64_t reports = 0;
  uint64_t placements = 0;  // calls placed here first
  struct Reservation {
    uint64_t ticket;
    double seconds;
    double at;
  };
  std::deque<Reservation> reservations;                          // oldest first
  std::map<std::string, FunctionSample, std::less<>> functions;  // from the reports

  ServerLoad Load() const;
  bool Serves(std::string_view function) const;
};

class ServerTable {
 public:
  // Where a placement for a site may go: the candidates, and for each the
  // entry it came from (candidates[i].server == i).
  struct Choices {
    std::vector<Candidate> candidates;
    std::vector<const ServerEntry *> servers;
    std::vector<bool> link_known;  // a bandwidth figure exists for the (site, server) link
  };

  // Adds or replaces the server (same id, or same address under a new id).
  // Returns true when an entry was replaced.
  bool Register(Registration reg, double now);
  // False when the id is unknown (the server must register again).
  bool Report(std::string_view id, LoadSample sample, double now);
  // Removes the server (its connection closed). False when unknown.
  bool Drop(std::string_view id);
  // Removes the servers whose lease ran out; returns their ids.
  std::vector<std::string> Expire(double now);

  // Every live server serving `function`, minus `exclude` (ids), with what
  // the table knows of it and of its link from `site`. A link with no
  // bandwidth figure yet gets `fallback`.
  Choices Candidates(std::string_view function, std::string_view site,
                     std::span<const std::string> exclude, const Link &fallback) const;

  // Records an assignment of `seconds` of predicted work under `ticket`.
  void Reserve(std::string_view id, uint64_t ticket, double seconds, double now);
  // The outcome of `ticket` arrived: its reservation, if still open, ends.
  void Release(std::string_view id, uint64_t ticket);
  // Reservations older than this end by themselves.
  void set_reservation_seconds(double s) { reservation_seconds_ = s; }

  // Link samples, keyed by (site, server address).
  LinkModel &LinkTo(std::string_view site, std::string_view address);
  const std::map<std::pair<std::string, std::string>, LinkModel> &links() const { return links_; }

  const ServerEntry *Find(std::string_view id) const;
  const std::map<std::string, ServerEntry, std::less<>> &servers() const { return servers_; }
  std::size_t size() const { return servers_.size(); }

 private:
  void ExpireReservations(ServerEntry &entry, double now) const;

  std::map<std::string, ServerEntry, std::less<>> servers_;  // by id
  std::map<std::pair<std::string, std::string>, LinkModel> links_;
  double reservation_seconds_ = 60;
};

}  // namespace ninf::meta
