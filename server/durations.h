// Durations as ninfd's log lines and statistics write them.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "server/process.h"

namespace ninf::server {

// Seconds from `from` to `to`; 0 when `from` was never set or lies ahead.
inline double SecondsBetween(Clock::time_point from, Clock::time_point to) {
  if (from == Clock::time_point() || to < from) return 0;
  return std::chrono::duration<double>(to - from).count();
}

// Fixed-point text for durations in log lines.
inline std::string Sec(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", s);
  return buf;
}

}  // namespace ninf::server
