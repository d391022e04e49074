// Outstanding asynchronous calls (Ninf_call_async and grpc_call_async share
// one table, so ids are unique across both). Each runs on a thread of its
// own: calls spend their time blocked on sockets, not computing. The result
// of a finished call stays queryable (grpc_get_error) until it is waited
// for, and its code after that until Reset(). Thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "protocol/status.h"

namespace ninf::client {

class Sessions {
 public:
  // How many waited-for calls' codes are kept (the newest): a program that
  // makes millions of asynchronous calls (Ninf_call_async in a loop,
  // Python's call_async) must not grow the table by one entry a call. An
  // older id is then unknown.
  static constexpr std::size_t kKeptCodes = 4096;

  static Sessions &Instance();

  // Starts `work` in the background and returns its id (>= 0). `cancel`
  // (may be empty) aborts it from another thread; `tag` is kept for the
  // caller (grpc_get_handle).
  int Start(std::function<Status()> work, std::function<void()> cancel, void *tag = nullptr);

  // Waits for call `id` and forgets it. NINF_ERR_INVALID_ID for an unknown id.
  Status Wait(int id);

  // Waits for whichever of `ids` (all outstanding ones when empty) ends
  // first and forgets it; *id = -1 and NINF_ERR_INVALID_ID when none is
  // outstanding.
  Status WaitAny(const std::vector<int> &ids, int *id);

  // True when finished, false while running; NINF_ERR_INVALID_ID if unknown.
  Status Probe(int id, bool *done);

  // Cancels a running call (its result becomes NINF_ERR_CANCELLED). No effect
  // on a finished one. NINF_ERR_INVALID_ID if unknown.
  Status Cancel(int id);
  void CancelAll();

  // Where call `id` stands; for a finished one *result is its outcome (only
  // the code, once it has been waited for).
  enum class State { kUnknown, kRunning, kFinished };
  State Result(int id, Status *result);
  void *Tag(int id);

  // Ids of the calls not yet waited for, in id order.
  std::vector<int> Outstanding();

  // Forgets the codes of calls already waited for (grpc_finalize).
  void Reset();

  struct Entry;  // defined in sessions.cc

 private:
  Sessions() = default;
};

}  // namespace ninf::client
