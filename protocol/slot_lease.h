// A function handle's slot kept between its calls (docs/server.md, "Slot
// leases"). Without it every call of a handle asks ninfd for a slot and
// waits for the answer (CTL_WANT_SLOT / CTL_SLOT), and reports each step
// (CTL_ARRIVING, CTL_ARGS_RECEIVED, CTL_REPLYING): five wake-ups of ninfd,
// one of them a round trip, on a call whose whole work may be a few
// microseconds. While nobody else asks for a slot, ninfd lets the handle
// keep the one its last call had, and the executable takes it for its next
// call from shared memory, without a message.
//
// ninfd and the executable share one page: a sealed memfd that the
// executable offers with its handle's first CTL_CALL_DONE (an executable
// that offers none asks for every call's slot, as before). Its lease word
// changes only by compare-and-swap, so a lease is never both used and
// taken back:
//
//   ninfd                                  executable
//   Grant:    kNone -> kIdle               Begin:  kIdle -> kInCall (a call starts)
//   TakeBack: kIdle -> kNone (freed now)   End:    kInCall -> kIdle (kept), or
//             kInCall -> kRevoked                  kRevoked -> kNone (given back)
//             (freed at that call's CTL_CALL_DONE)
//
// A call that finds no lease (kNone) asks for its slot as before. The
// executable also writes which step a leased call is in and when it began,
// for ninfd's watchdog (transfer stalls, wall-clock limits, idle handles):
// those are reports, which ninfd bounds and never trusts for more than
// its own decisions about this one executable.
#pragma once

#include <cstdint>

#include "protocol/protocol_export.h"
#include "protocol/status.h"

namespace ninf {

enum LeaseWord : uint32_t {
  kLeaseNone = 0,     // no lease: a call asks for its slot
  kLeaseIdle = 1,     // the handle keeps its slot and has no call under way
  kLeaseInCall = 2,   // a call under way on the kept slot
  kLeaseRevoked = 3,  // ninfd wants the slot back once the call under way is done
};

// The step a leased call is in (the executable's report).
enum LeasePhase : uint32_t {
  kLeasePhaseNone = 0,
  kLeasePhaseReceiving = 1,  // reading the call's arguments
  kLeasePhaseComputing = 2,  // the routine runs
  kLeasePhaseReplying = 3,   // writing the result
};

class NINF_PROTOCOL_API SlotLease {
 public:
  SlotLease() = default;
  ~SlotLease();
  SlotLease(SlotLease &&other) noexcept;
  SlotLease &operator=(SlotLease &&other) noexcept;
  SlotLease(const SlotLease &) = delete;
  SlotLease &operator=(const SlotLease &) = delete;

  // The executable's side: a new page, mapped, sealed at its size, with no
  // lease. fd() is what ninfd maps (sent once with CTL_CALL_DONE).
  static Status Create(SlotLease *out);
  // ninfd's side: maps the page an executable offered (takes `fd`), which
  // must be a page sealed against shrinking, so that no truncation can
  // fault ninfd.
  static Status Map(int fd, SlotLease *out);

  bool valid() const { return page_ != nullptr; }
  int fd() const { return fd_; }

  // --- ninfd ---
  // kNone -> kIdle: the handle keeps its slot. False when the word is
  // anything else (then nothing changed).
  bool Grant();
  enum class Taken {
    kNow,        // it was idle: the slot is free now
    kAfterCall,  // a call is under way on it: free at that call's CALL_DONE
    kNotLeased,  // there was no lease (kNone)
  };
  // Takes the lease back (a call waits, a reload, the shutdown). A word
  // the executable made unreadable is taken as kNone.
  Taken TakeBack();
  // At a leased handle's CTL_CALL_DONE: whether the lease goes on (the
  // executable kept it, or already began its next call on it). False when
  // the executable gave it back (kNone) or wrote nonsense; the word is
  // kNone then.
  bool StillLeased();
  // Whether a call is under way on the lease, its step, and when it began
  // (CLOCK_MONOTONIC nanoseconds, 0 when unknown).
  bool InCall() const;
  LeasePhase Phase() const;
  uint64_t CallStartedNs() const;
  // How many calls the executable began on the lease.
  uint64_t LeasedCalls() const;

  // --- the executable ---
  // kIdle -> kInCall: this call runs on the kept slot (no CTL_WANT_SLOT).
  bool Begin();
  void SetPhase(LeasePhase phase);
  // Whether ninfd asked for the slot back during this call.
  bool RevokeAsked() const;
  // After the call: kInCall -> kIdle (kept, true), or the lease given back
  // (kNone, false) when ninfd asked for it.
  bool End();

 private:
  struct Page;
  Page *page_ = nullptr;
  int fd_ = -1;
  void Reset();
};

}  // namespace ninf
