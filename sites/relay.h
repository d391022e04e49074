// A TCP relay that holds every byte for a fixed time in each direction: the
// added one-way delay of an emulated wide-area link (docs/loadtest.md,
// "Sites"). This kernel has no netem, so the delay is made here, in user
// space. The link's rate is tc's job (ninf-sites), or, with a rate given,
// the relay's own: each direction of the relay is then one link that every
// connection shares fairly (deficit round robin over the connections with
// bytes due, a token bucket at the rate). tc's tail-drop queue, shared by
// many TCP flows, let one of sixteen stall for a minute; a relay that
// paces never drops a byte, and no connection waits while others send.
//
// Each accepted connection gets a connection to the target, and each of its
// two directions is a queue of chunks stamped with the time they are due:
// read time + delay. A timer writes the chunks whose time has come, in order.
// What a direction holds (queued and being written) is bounded: above
// kMaxHeldBytes it stops reading its source until the writes drain below
// half, so a fast sender meets TCP backpressure, not unbounded memory. The
// bound also caps the relay's throughput at kMaxHeldBytes / delay (16 MiB /
// 100 ms = 168 MB/s), above the links it is meant for. It also stops reading
// while more than kMaxUnsentBytes of due chunks wait for the kernel to take
// them (the link is slower than the source): the source then sees the
// link's pace, as it would on a real link, instead of 16 MiB taken at
// loopback speed and then nothing for as long as the link needs to drain
// them (tens of seconds for one of 16 clients on a slow link: long enough
// for a client to give up on a peer that makes no progress).
//
// A half-close travels too: after a source's EOF and its last chunk, the
// other side is shut down for writing; the pair closes when both directions
// have ended or either side fails.
#pragma once

#include <uv.h>

#include <cstdint>
#include <string>

namespace ninf::sites {

constexpr std::size_t kMaxHeldBytes = 16u << 20;
constexpr std::size_t kMaxUnsentBytes = 256u << 10;

// The most a direction sends in one turn of the round robin, and the token
// bucket's depth: one read's worth (what a chunk holds at most).
constexpr std::size_t kQuantumBytes = 64u << 10;

struct RelayConfig {
  sockaddr_storage target{};      // where every accepted connection is relayed to
  uint64_t delay_ms = 0;          // added in each direction
  uint64_t rate_bytes_per_s = 0;  // 0: no pacing here (tc's); else each direction's link
};

// Starts relaying every connection accepted on `listener` (bound and
// listening; the caller keeps it open) to `config.target`. Runs on the
// listener's loop; `config` must outlive it.
int StartRelaying(uv_tcp_t *listener, const RelayConfig *config);

}  // namespace ninf::sites
