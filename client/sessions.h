// Outstanding asynchronous calls. Each runs its Execute step on a thread of
// its own (calls spend their time blocked on sockets, not computing), and
// the waits pick them up by id. Thread-safe.
#pragma once

#include <memory>
#include <vector>

#include "remote_call.h"
#include "status.h"

namespace ninf::client {

class Sessions {
 public:
  static Sessions &Instance();

  // Starts `call` in the background and returns its id (>= 0).
  int Start(std::unique_ptr<RemoteCall> call);

  // Waits for call `id` and forgets it. NINF_ERR_INVALID_ID for an unknown id.
  Status Wait(int id);

  // Waits for whichever outstanding call ends first; *id = -1 and
  // NINF_ERR_INVALID_ID when none is outstanding.
  Status WaitAny(int *id);

  // Ids of the calls not yet waited for, oldest first.
  std::vector<int> Outstanding();

  struct Entry;  // defined in sessions.cc

 private:
  Sessions() = default;
};

}  // namespace ninf::client
