// Whether a one-shot executable serves another call after this one. Pure
// logic on plain values, unit-tested without processes
// (tests/server/policy_test.cc).
#pragma once

#include <cstdint>

namespace ninf::server {

// Reused executables: after a one-shot call the executable goes back to the
// pool instead of exiting, until it has served max_calls calls or lived
// max_age (php-fpm's pm.max_requests, gunicorn's max_requests: a routine
// that leaks, or fragments its heap, is renewed now and then). A function
// whose routine keeps global state opts out (IDL `Reuse "no"`, or
// executable_max_calls = 1 in its [limits.NAME] table).
struct ReuseFacts {
  bool persistent = false;      // handles keep their executable for their own calls
  bool function_allows = true;  // the IDL does not say Reuse "no"
  int64_t max_calls = 0;        // per process; 1: one call each (no reuse)
  uint64_t served = 0;          // calls the process has served, the current one included
  int64_t max_age_ms = 0;       // 0: no limit
  int64_t age_ms = 0;           // since the process started
  bool stopping = false;        // the server is shutting down
};
// Whether the process may serve one more call after the ones it served.
bool MayReuse(const ReuseFacts &f);

}  // namespace ninf::server
