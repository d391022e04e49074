#include "daemon/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <iterator>

namespace ninf::daemon {
namespace {

bool ToNumber(std::string_view word, uint64_t *out) {
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), *out);
  return ec == std::errc() && end == word.data() + word.size() && !word.empty();
}

// The whole of a small file; "" when it cannot be read. /proc files report
// a size of 0, so they are read to their end rather than by their size.
std::string ReadSmallFile(const char *path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Entries of /proc/self/fd, less the one the listing itself holds open.
// -1 when the folder cannot be read.
int CountOpenFds() {
  DIR *dir = ::opendir("/proc/self/fd");
  if (!dir) return -1;
  int n = 0;
  while (const dirent *e = ::readdir(dir))
    if (e->d_name[0] != '.') ++n;
  ::closedir(dir);
  return n > 0 ? n - 1 : 0;
}

}  // namespace

bool ParseProcStat(std::string_view text, ProcStatFields *out) {
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos) return false;
  // After "pid (comm)" come field 3 (state) onwards, separated by spaces.
  std::string_view rest = text.substr(close + 1);
  uint64_t *wanted[25] = {};  // by field number
  wanted[14] = &out->utime_ticks;
  wanted[15] = &out->stime_ticks;
  wanted[22] = &out->start_ticks;
  wanted[23] = &out->vsize_bytes;
  wanted[24] = &out->rss_pages;
  int field = 2;
  std::size_t pos = 0;
  while (field < 24) {
    while (pos < rest.size() && (rest[pos] == ' ' || rest[pos] == '\n')) ++pos;
    if (pos == rest.size()) return false;
    std::size_t end = pos;
    while (end < rest.size() && rest[end] != ' ' && rest[end] != '\n') ++end;
    ++field;
    if (wanted[field] && !ToNumber(rest.substr(pos, end - pos), wanted[field])) return false;
    pos = end;
  }
  return true;
}

bool ParseBootTime(std::string_view text, uint64_t *seconds) {
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    if (line.substr(0, 6) == "btime ") return ToNumber(line.substr(6), seconds);
    at = end + 1;
  }
  return false;
}

bool ReadProcessStats(ProcessStats *out) {
  bool complete = true;
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  ProcStatFields f;
  uint64_t boot = 0;
  if (ticks > 0 && page > 0 && ParseProcStat(ReadSmallFile("/proc/self/stat"), &f) &&
      ParseBootTime(ReadSmallFile("/proc/stat"), &boot)) {
    out->cpu_seconds = static_cast<double>(f.utime_ticks + f.stime_ticks) / ticks;
    out->resident_bytes = static_cast<double>(f.rss_pages) * page;
    out->virtual_bytes = static_cast<double>(f.vsize_bytes);
    out->start_time_seconds =
        static_cast<double>(boot) + static_cast<double>(f.start_ticks) / ticks;
  } else {
    complete = false;
  }
  if (int n = CountOpenFds(); n >= 0)
    out->open_fds = n;
  else
    complete = false;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0)
    out->max_fds = static_cast<double>(limit.rlim_cur);  // RLIM_INFINITY: a huge number
  else
    complete = false;
  return complete;
}

void AppendProcessMetrics(const ProcessStats &s, PrometheusText *out) {
  out->Metric("process_cpu_seconds_total", "counter",
              "CPU time of the daemon process, user and system, in seconds.", s.cpu_seconds);
  out->Metric("process_resident_memory_bytes", "gauge", "The process's resident set, in bytes.",
              s.resident_bytes);
  out->Metric("process_virtual_memory_bytes", "gauge", "The process's virtual memory, in bytes.",
              s.virtual_bytes);
  out->Metric("process_open_fds", "gauge", "Descriptors the process has open.", s.open_fds);
  out->Metric("process_max_fds", "gauge", "The process's descriptor limit (soft RLIMIT_NOFILE).",
              s.max_fds);
  out->Metric("process_start_time_seconds", "gauge",
              "When the process started, in seconds since the Unix epoch.", s.start_time_seconds);
}

}  // namespace ninf::daemon
