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
// Hostile peers (issue 28): everything a server adds (its functions, their
// interfaces, its reservations) lives in its entry and goes with its lease;
// a load report may only speak of the functions the server registered; the
// values of registrations and reports are checked (CheckRegistration,
// CheckLoad) before they reach the table; a reservation belongs to the
// client that got it; link samples are keyed by the reporting client (its
// key and address), not only by the site it names, and the link table
// evicts the least recently used links, per reporter and in all, so it is
// never full.
//
// Pure: no sockets, no clocks (time is passed in, in seconds), no protobuf.
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <span>
#include <string>
#include <tuple>
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
  uint32_t cores = 1;
  uint32_t slots = 1;
  double flops_per_second = 0;
  double startup_seconds = 0;
  double lease_seconds = 6;
  std::vector<std::string> functions;
  // Each function's interface in a comparable form (the daemon stores the
  // serialized FunctionInterface); a function without one is compared as "".
  std::map<std::string, std::string, std::less<>> interfaces;
};

struct LoadSample {
  uint32_t running = 0;
  uint32_t queued = 0;
  // Admission after arrival (ninfd's docs/server.md): calls arriving or
  // holding their arguments without a slot, their bytes, and calls waiting
  // before their hand-off for room. Shown, not used for placement.
  uint32_t arriving = 0;
  uint64_t arriving_bytes = 0;
  uint32_t arrival_waiting = 0;
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
    std::string owner;  // the client that was given the ticket (Reporter of its connection)
  };
  std::deque<Reservation> reservations;                          // oldest first
  std::map<std::string, FunctionSample, std::less<>> functions;  // from the reports

  ServerLoad Load() const;
  // Registered `function` (whether it is sent calls of it: ServerTable::Candidates).
  bool Serves(std::string_view function) const;
  // The interface it registered for `function` ("" when none).
  std::string_view InterfaceOf(std::string_view function) const;
};

// The ranges a registration's and a load report's figures must be in:
// anything outside (a NaN, an infinity, 2^32-1 calls queued) is refused with
// the field named, rather than ranked.
inline constexpr uint32_t kMaxSlots = 1u << 16;
inline constexpr uint32_t kMaxCalls = 1u << 20;     // running, queued
inline constexpr double kMaxFlopsPerSecond = 1e18;  // an exaflop machine
inline constexpr double kMaxSeconds = 1e7;          // startup, a call's mean time, lease
inline constexpr double kMaxWorkSeconds = 1e12;     // queued work
inline constexpr double kMaxLoadAverage = 1e6;

// "" when usable, else "FIELD: why" (FIELD as in ninf.proto).
std::string CheckRegistration(const Registration &reg);
std::string CheckLoad(const LoadSample &sample);

// A function's measured speed at a server is used once it rests on this
// many completed calls there; before, the server's calibrated speed. The
// first call of a function on a server computes cold (dgesv n = 100:
// 4.7-11 ms where warm calls take 0.5), ninfd's smoothed speed starts at
// that sample, and a server judged by it alone was never chosen again while
// others had free slots: 4 of 32 servers ran 1 call each in a run of 1,624
// (bench/scale.sh, issue 30). The calibration, a dense product's speed, is
// optimistic for most functions, so a server is tried until its figure is
// measured, at a cost of a few calls per server and function. The same
// holds for the function's mean service time there (what a call without a
// CalcOrder is predicted to take): unknown (0) until then.
inline constexpr uint64_t kTrustedSpeedCalls = 3;

// A link as ninf-meta keys it: the site the client named (or its address),
// the reporting client (Reporter: key id and address), the server address.
using LinkKey = std::tuple<std::string, std::string, std::string>;

class ServerTable {
 public:
  // Where a placement for a site may go: the candidates, and for each the
  // entry it came from (candidates[i].server == i).
  struct Choices {
    std::vector<Candidate> candidates;
    std::vector<const ServerEntry *> servers;
    std::vector<bool> link_known;  // a bandwidth figure exists for the (site, server) link
  };

  // Adds or replaces the server (same id, or same address under a new id:
  // its old functions and interfaces go with the old entry).
  // Returns true when an entry was replaced.
  bool Register(Registration reg, double now);
  // False when the id is unknown (the server must register again). Samples
  // of functions the server did not register are dropped; `ignored` (if
  // given) receives how many.
  bool Report(std::string_view id, LoadSample sample, double now, std::size_t *ignored = nullptr);
  // Removes the server (its connection closed). False when unknown.
  bool Drop(std::string_view id);
  // Removes the servers whose lease ran out; returns their ids.
  std::vector<std::string> Expire(double now);

  // The server whose interface of `function` clients see: of the live
  // servers registering it, the one registered longest (ties: smallest id).
  // A server registering another interface for the name is not sent calls
  // of it while that one lives; once it leaves, the next in line reigns.
  // Null when nobody serves it.
  const ServerEntry *InterfaceOwner(std::string_view function) const;
  // The functions `id` registered but is not sent calls of, because a
  // longer-registered live server gave another interface for them.
  std::vector<std::string> Conflicts(std::string_view id) const;

  // Every live server serving `function` (with the reigning interface),
  // minus `exclude` (ids), with what the table knows of it and of its link
  // from (`site`, `reporter`). A link with no bandwidth figure yet gets
  // `fallback`.
  Choices Candidates(std::string_view function, std::string_view site,
                     std::span<const std::string> exclude, const Link &fallback,
                     std::string_view reporter = "") const;

  // Records an assignment of `seconds` of predicted work under `ticket`,
  // given to `owner`.
  void Reserve(std::string_view id, uint64_t ticket, double seconds, double now,
               std::string_view owner = "");
  enum class Released { kYes, kUnknown, kNotYours };
  // The outcome of `ticket` arrived from `owner`: its reservation, if still
  // open and `owner`'s, ends (kYes). kNotYours: it is open but another's.
  Released Release(std::string_view id, uint64_t ticket, std::string_view owner = "");
  // Reservations older than this end by themselves.
  void set_reservation_seconds(double s) { reservation_seconds_ = s; }

  // The link model of (site, reporter, server address), made if new, and
  // marked used. A new link beyond `per_reporter` of its reporter's evicts
  // that reporter's least recently used one; beyond `total` in all, the
  // least recently used of all.
  LinkModel &LinkTo(std::string_view site, std::string_view reporter, std::string_view address);
  LinkModel &LinkTo(std::string_view site, std::string_view address) {
    return LinkTo(site, "", address);
  }
  const LinkModel *FindLink(std::string_view site, std::string_view reporter,
                            std::string_view address) const;
  void set_link_caps(std::size_t total, std::size_t per_reporter) {
    max_links_ = total;
    max_links_per_reporter_ = per_reporter;
  }
  std::size_t link_count() const { return links_.size(); }
  uint64_t links_evicted() const { return links_evicted_; }
  // The links, most recently used first.
  const std::list<LinkKey> &links_by_use() const { return by_use_; }
  const LinkModel &LinkAt(const LinkKey &key) const { return links_.at(key).model; }

  const ServerEntry *Find(std::string_view id) const;
  const std::map<std::string, ServerEntry, std::less<>> &servers() const { return servers_; }
  std::size_t size() const { return servers_.size(); }

 private:
  void ExpireReservations(ServerEntry &entry, double now) const;

  struct LinkSlot {
    LinkModel model;
    std::list<LinkKey>::iterator use;           // in by_use_
    std::list<LinkKey>::iterator reporter_use;  // in by_reporter_[reporter]
  };
  void EvictLink(const LinkKey &key);

  std::map<std::string, ServerEntry, std::less<>> servers_;  // by id
  std::map<LinkKey, LinkSlot> links_;
  std::list<LinkKey> by_use_;                                           // most recent first
  std::map<std::string, std::list<LinkKey>, std::less<>> by_reporter_;  // the same, per reporter
  std::size_t max_links_ = 100000;
  std::size_t max_links_per_reporter_ = 1024;
  uint64_t links_evicted_ = 0;
  double reservation_seconds_ = 60;
};

}  // namespace ninf::meta
