#include "server/reuse_policy.h"

namespace ninf::server {

bool MayReuse(const ReuseFacts &f) {
  if (f.persistent || !f.function_allows || f.stopping) return false;
  if (f.max_calls > 0 && f.served >= static_cast<uint64_t>(f.max_calls)) return false;
  return f.max_age_ms <= 0 || f.age_ms < f.max_age_ms;
}

}  // namespace ninf::server
