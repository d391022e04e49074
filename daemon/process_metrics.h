// The standard process_* metrics of the Prometheus client libraries, for
// both daemons' /metrics (metrics_endpoint.h appends them to each scrape):
//
//   process_cpu_seconds_total        user + system CPU time
//   process_resident_memory_bytes    resident set size
//   process_virtual_memory_bytes     virtual memory size
//   process_open_fds                 open descriptors
//   process_max_fds                  the soft RLIMIT_NOFILE
//   process_start_time_seconds       start time, seconds since the Unix epoch
//
// Read from /proc/self (Linux), as the Go and Python clients do, so that
// the dashboards written for them work unchanged. Parsing is a pure
// function over the files' text (ParseProcStat), unit-tested; reading them
// is ReadProcessStats. Builds on prometheus_text.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "daemon/prometheus_text.h"

namespace ninf::daemon {

struct ProcessStats {
  double cpu_seconds = 0;
  double resident_bytes = 0;
  double virtual_bytes = 0;
  double open_fds = 0;
  double max_fds = 0;
  double start_time_seconds = 0;
};

// The fields of /proc/self/stat's text that ProcessStats needs: utime and
// stime (fields 14, 15, in clock ticks), starttime (22, ticks since boot),
// vsize (23, bytes) and rss (24, pages). The command name (field 2) may
// hold spaces and parentheses, so fields are counted after its last ')'.
// False when the text has fewer fields or one is not a number.
struct ProcStatFields {
  uint64_t utime_ticks = 0, stime_ticks = 0, start_ticks = 0, vsize_bytes = 0, rss_pages = 0;
};
bool ParseProcStat(std::string_view text, ProcStatFields *out);

// The "btime SECONDS" line of /proc/stat: the boot time since the epoch.
// False when there is none.
bool ParseBootTime(std::string_view proc_stat_text, uint64_t *seconds);

// Reads /proc/self/stat, /proc/stat, /proc/self/fd and the descriptor
// limit. A file that cannot be read leaves its figures at 0 (a scrape is
// never refused for it); false then.
bool ReadProcessStats(ProcessStats *out);

// The six families, with HELP and TYPE lines.
void AppendProcessMetrics(const ProcessStats &stats, PrometheusText *out);

}  // namespace ninf::daemon
