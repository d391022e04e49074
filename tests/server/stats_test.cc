// Unit tests of the statistics, their stable text form (server/stats.h)
// and their Prometheus form (server/metrics_text.h).
#include "server/stats.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>

#include "server/metrics_text.h"

using namespace ninf::server;

namespace {

std::map<std::string, std::string> Parse(const std::string &text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    auto colon = line.find(':');
    REQUIRE(colon != std::string::npos);
    REQUIRE(out.count(line.substr(0, colon)) == 0);  // each name once
    out[line.substr(0, colon)] = line.substr(colon + 1);
  }
  return out;
}

}  // namespace

TEST_CASE("stats_counts_outcomes_per_function", "[stats]") {
  Counters c;
  c.RecordCall("dgesv", CallOutcome::kCompleted, 2.0, 100, 50);
  c.RecordCall("dgesv", CallOutcome::kCompleted, 4.0, 100, 50);
  c.RecordCall("dgesv", CallOutcome::kFailed, 9.0, 10, 0);
  c.RecordCall("ep", CallOutcome::kCancelled, 0, 0, 0);
  c.RecordCall("ep", CallOutcome::kRejected, 0, 0, 0);
  CHECK(c.completed == 2);
  CHECK(c.failed == 1);
  CHECK(c.cancelled == 1);
  CHECK(c.rejected == 1);
  CHECK(c.bytes_in == 210);
  CHECK(c.bytes_out == 100);
  CHECK(c.functions["dgesv"].calls == 3);
  CHECK(c.functions["dgesv"].failed == 1);
  CHECK(c.functions["ep"].calls == 1);  // the rejected call never reached ep
}

TEST_CASE("stats_format_has_stable_lines", "[stats]") {
  Gauges g;
  g.version = "1.2.3";
  g.pid = 42;
  g.uptime_seconds = 12.7;
  g.cores = 8;
  g.slots = 2;
  g.threads_per_job = 4;
  g.running = 1;
  g.queued = 3;
  g.connections = 5;
  g.load_average_1 = 0.5;
  g.warm_executables = 1;
  g.warm_idle = 2;
  g.persistent_executables = 4;
  Counters c;
  c.warm_hits = 5;
  c.warm_misses = 6;
  c.RecordCall("dgesv", CallOutcome::kCompleted, 2.0, 100, 50);
  c.RecordCall("dgesv", CallOutcome::kCompleted, 3.0, 100, 50);
  c.RecordCall("a_first", CallOutcome::kFailed, 0, 0, 0);
  c.executables_started = 3;
  std::string text = FormatStats(g, c);
  REQUIRE(text.back() == '\n');
  auto s = Parse(text);
  CHECK(s["version"] == "1.2.3");
  CHECK(s["pid"] == "42");
  CHECK(s["uptime_seconds"] == "12");
  CHECK(s["cores"] == "8");
  CHECK(s["slots"] == "2");
  CHECK(s["threads_per_job"] == "4");
  CHECK(s["running"] == "1");
  CHECK(s["queued"] == "3");
  CHECK(s["connections"] == "5");
  CHECK(s["completed"] == "2");
  CHECK(s["failed"] == "1");
  CHECK(s["cancelled"] == "0");
  CHECK(s["bytes_in"] == "200");
  CHECK(s["bytes_out"] == "100");
  CHECK(s["load_average_1"] == "0.50");
  CHECK(s["executables_started"] == "3");
  CHECK(s["warm_executables"] == "1");
  CHECK(s["warm_idle"] == "2");
  CHECK(s["warm_hits"] == "5");
  CHECK(s["warm_misses"] == "6");
  CHECK(s["persistent_executables"] == "4");
  CHECK(s["function.dgesv.calls"] == "2");
  CHECK(s["function.dgesv.failed"] == "0");
  CHECK(s["function.dgesv.mean_seconds"] == "2.500000");
  CHECK(s["function.a_first.mean_seconds"] == "0.000000");  // no completed call: no NaN
  // Function lines come after the global ones, sorted by name.
  CHECK(text.find("function.a_first.calls") < text.find("function.dgesv.calls"));
  CHECK(text.find("load_average_1") < text.find("function."));
}

TEST_CASE("stats_speed_and_startup_are_smoothed_and_ignore_unmeasured", "[stats]") {
  Counters c;
  c.RecordSpeed("dgesv", 2e9, 1.0);  // first sample taken as it is
  CHECK(c.functions["dgesv"].flops_per_second == Approx(2e9));
  c.RecordSpeed("dgesv", 4e9, 1.0);  // then 0.7 old + 0.3 new
  CHECK(c.functions["dgesv"].flops_per_second == Approx(2.6e9));
  c.RecordSpeed("dgesv", 0, 1.0);     // no CalcOrder: nothing
  c.RecordSpeed("dgesv", 1e9, 1e-6);  // too short to time: nothing
  CHECK(c.functions["dgesv"].flops_per_second == Approx(2.6e9));
  c.RecordStartup(-1);  // not a cold start
  CHECK(c.startup_seconds == 0);
  c.RecordStartup(0.004);
  c.RecordStartup(0.002);
  CHECK(c.startup_seconds == Approx(0.0034));
}

TEST_CASE("stats_accounting_splits_time_and_counts_core_seconds", "[stats]") {
  Counters c;
  c.RecordWait("dgesv", 0.5);
  c.RecordWait("dgesv", 1.5);
  c.RecordWait("ep", -1);                 // a clock step backwards counts as no wait
  c.RecordPhases("dgesv", 0.25, 2.0, 2);  // 2 s on 2 threads: 4 core-seconds
  c.RecordPhases("ep", 0.0, 3.0, 1);
  c.RecordPhases("ep", std::nan(""), 1.0, 0);  // no threads known: counted as one
  CHECK(c.queue_seconds == 2.0);
  CHECK(c.busy_core_seconds == 8.0);
  CHECK(c.functions["dgesv"].admitted == 2);
  CHECK(c.functions["dgesv"].wait_seconds == 2.0);
  CHECK(c.functions["dgesv"].transfer_seconds == 0.25);
  CHECK(c.functions["ep"].compute_seconds == 4.0);
  CHECK(c.functions["ep"].transfer_seconds == 0.0);

  Gauges g;
  g.thread_budget = "adaptive";
  g.queue_order = "sjf";
  g.threads_held = 3;
  g.busy_core_seconds = c.busy_core_seconds + 1.25;  // with a routine still running
  auto s = Parse(FormatStats(g, c));
  CHECK(s["thread_budget"] == "adaptive");
  CHECK(s["queue_order"] == "sjf");
  CHECK(s["threads_held"] == "3");
  CHECK(s["busy_core_seconds"] == "9.250000");
  CHECK(s["queue_seconds"] == "2.000000");
  CHECK(s["function.dgesv.wait_seconds"] == "2.000000");
  CHECK(s["function.dgesv.transfer_seconds"] == "0.250000");
  CHECK(s["function.ep.compute_seconds"] == "4.000000");
}

TEST_CASE("metrics_text_is_prometheus_exposition", "[stats][metrics]") {
  Counters c;
  c.completed = 3;
  c.RecordCall("ep", CallOutcome::kCompleted, 0.5, 100, 200);
  c.RecordWait("ep", 0.002);
  c.RecordPhases("ep", 0.02, 7.0, 2);
  c.RecordPhases("ep", 0.03, 700.0, 2);  // past the last bound: only +Inf counts it
  Gauges g;
  g.version = "1.2\"3";
  g.cores = 2;
  g.served = {"ep", "null"};
  const std::string text = FormatPrometheus(g, c);
  CHECK_THAT(text, Catch::Contains("# TYPE ninf_calls_total counter\n"));
  CHECK_THAT(text, Catch::Contains("ninf_build_info{version=\"1.2\\\"3\"} 1\n"));  // escaped
  CHECK_THAT(text, Catch::Contains("ninf_calls_total{function=\"ep\",outcome=\"completed\"} 1\n"));
  // A served function never called is there at zero, so that rate() sees
  // its first call.
  CHECK_THAT(text,
             Catch::Contains("ninf_calls_total{function=\"null\",outcome=\"completed\"} 0\n"));
  // Buckets are cumulative: 7 s falls in le=10, 700 s only in +Inf.
  const std::string compute = "ninf_call_seconds_bucket{function=\"ep\",phase=\"compute\",le=";
  CHECK_THAT(text, Catch::Contains(compute + "\"5\"} 0\n"));
  CHECK_THAT(text, Catch::Contains(compute + "\"10\"} 1\n"));
  CHECK_THAT(text, Catch::Contains(compute + "\"600\"} 1\n"));
  CHECK_THAT(text, Catch::Contains(compute + "\"+Inf\"} 2\n"));
  CHECK_THAT(text,
             Catch::Contains("ninf_call_seconds_count{function=\"ep\",phase=\"compute\"} 2\n"));
  CHECK_THAT(text,
             Catch::Contains("ninf_call_seconds_sum{function=\"ep\",phase=\"compute\"} 707\n"));
  CHECK_THAT(
      text,
      Catch::Contains("ninf_call_seconds_bucket{function=\"ep\",phase=\"wait\",le=\"0.005\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("ninf_busy_core_seconds_total 0\n"));  // a gauge value
  CHECK_THAT(text, Catch::Contains("ninf_bytes_total{direction=\"out\"} 200\n"));
}
