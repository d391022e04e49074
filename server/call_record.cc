#include "server/call_record.h"

#include <chrono>

namespace ninf::server {

double CallRecord::QueueSeconds() const {
  if (admitted < wait_from) return 0;
  return std::chrono::duration<double>(admitted - wait_from).count();
}

double CallRecord::StartupSeconds(double recv_seconds) const {
  // Admitted after arrival, the arguments were in at CTL_WANT_SLOT; the
  // wait for the slot is no start-up.
  const Clock::time_point in = args_first ? wait_from : computing_since;
  if (!cold_start || calls_done != 1 || in < handed_at) return -1;
  return std::chrono::duration<double>(in - handed_at).count() - recv_seconds;
}

}  // namespace ninf::server
