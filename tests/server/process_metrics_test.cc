// The process_* metrics both daemons' /metrics end with
// (daemon/process_metrics.h): /proc/self/stat parsed by field number after
// the command name, whatever that name holds; /proc/stat's btime; and the
// figures read from this very process.
#include "daemon/process_metrics.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <ctime>
#include <string>

using namespace ninf::daemon;

namespace {

// A /proc/self/stat line with the given command name: fields 3-52, each
// field N holding N * 10 except the ones the parser reads.
std::string StatLine(const std::string &comm) {
  std::string line = "1234 (" + comm + ")";
  for (int field = 3; field <= 52; ++field) {
    std::string value = std::to_string(field * 10);
    if (field == 3) value = "S";
    if (field == 14) value = "250";        // utime
    if (field == 15) value = "50";         // stime
    if (field == 18) value = "-20";        // priority may be negative: not read
    if (field == 22) value = "1000";       // starttime
    if (field == 23) value = "123456789";  // vsize
    if (field == 24) value = "4096";       // rss
    line += " " + value;
  }
  return line + "\n";
}

}  // namespace

TEST_CASE("process_metrics_parse_stat_after_the_command_name", "[metrics]") {
  for (const std::string comm : {"ninfd", "ninf meta", "a) (b", ")", "x 1 2 3"}) {
    INFO("comm " << comm);
    ProcStatFields f;
    REQUIRE(ParseProcStat(StatLine(comm), &f));
    CHECK(f.utime_ticks == 250);
    CHECK(f.stime_ticks == 50);
    CHECK(f.start_ticks == 1000);
    CHECK(f.vsize_bytes == 123456789);
    CHECK(f.rss_pages == 4096);
  }
  ProcStatFields f;
  CHECK_FALSE(ParseProcStat("", &f));
  CHECK_FALSE(ParseProcStat("1234 (ninfd) S 1 2 3", &f));  // too few fields
  std::string bad = StatLine("ninfd");
  bad.replace(bad.find(" 250 "), 5, " x50 ");
  CHECK_FALSE(ParseProcStat(bad, &f));  // utime not a number
}

TEST_CASE("process_metrics_boot_time_from_proc_stat", "[metrics]") {
  uint64_t boot = 0;
  REQUIRE(ParseBootTime("cpu  1 2 3\nintr 5\nbtime 1700000000\nprocesses 9\n", &boot));
  CHECK(boot == 1700000000);
  CHECK_FALSE(ParseBootTime("cpu 1 2 3\n", &boot));
  CHECK_FALSE(ParseBootTime("btime soon\n", &boot));
}

// This test process's own figures: plausible, and in the text with the six
// names the Prometheus client libraries use.
TEST_CASE("process_metrics_read_this_process", "[metrics]") {
  ProcessStats s;
  REQUIRE(ReadProcessStats(&s));
  CHECK(s.resident_bytes > 0);
  CHECK(s.virtual_bytes >= s.resident_bytes);
  CHECK(s.open_fds >= 3);  // stdin, stdout, stderr at least
  CHECK(s.max_fds >= s.open_fds);
  CHECK(s.cpu_seconds >= 0);
  const double now = static_cast<double>(std::time(nullptr));
  CHECK(s.start_time_seconds > now - 86400);  // started today (a test is short)
  CHECK(s.start_time_seconds <= now + 1);
  PrometheusText text;
  AppendProcessMetrics(s, &text);
  const std::string out = text.Take();
  for (const char *name : {"process_cpu_seconds_total", "process_resident_memory_bytes",
                           "process_virtual_memory_bytes", "process_open_fds", "process_max_fds",
                           "process_start_time_seconds"})
    CHECK_THAT(out, Catch::Contains(std::string("\n") + name + " "));
  CHECK_THAT(out, Catch::Contains("# TYPE process_cpu_seconds_total counter\n"));
}
