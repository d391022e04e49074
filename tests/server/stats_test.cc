// Unit tests of the statistics, their stable text form (server/stats.h)
// and their Prometheus form (server/metrics_text.h).
#include "server/stats.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "daemon/prometheus_text.h"
#include "server/metrics_text.h"
#include "server/stats_table.h"

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

// Everything `ninfd --status` says is in /metrics too (issue 31): each
// global status line (not function.* or user.*, which the labelled
// families carry) names its metric sample here, and that sample is in the
// text with the same value. A status line added without a metric fails
// this test until it is exported (or listed below with the reason).
TEST_CASE("metrics_text_exports_every_status_line", "[stats][metrics]") {
  Gauges g;
  g.version = "9.9";
  g.pid = 4242;
  g.uptime_seconds = 12;
  g.cores = 3;
  g.slots = 5;
  g.threads_per_job = 7;
  g.thread_budget = "fair";
  g.queue_order = "fifo";
  g.admission = "arrival";
  g.queue_limit = 11;
  g.max_call_bytes = 13;
  g.functions = 17;
  g.running = 2;
  g.queued = 19;
  g.arrival_limit = 23;
  g.arrival_bytes_limit = 29;
  g.arrival_waiting = 31;
  g.arrival_waiting_bytes = 37;
  g.arrival_held = 41;
  g.arrival_held_bytes = 43;
  g.arriving = 47;
  g.held = 53;
  g.held_bytes = 59;
  g.threads_held = 61;
  g.busy_core_seconds = 67;
  g.jobs = 71;
  g.connections = 73;
  g.warm_executables = 79;
  g.warm_idle = 83;
  g.persistent_executables = 89;
  g.store_entries = 97;
  g.store_bytes = 101;
  g.store_cap = 103;
  g.store_stored = 107;
  g.store_refused = 109;
  g.store_expired = 113;
  g.store_released = 127;
  g.store_served_bytes = 131;
  g.store_descriptors = 137;
  g.load_average_1 = 1.5;
  Counters c;
  c.queue_seconds = 139;
  c.connections_accepted = 149;
  c.completed = 151;
  c.failed = 157;
  c.cancelled = 163;
  c.rejected = 167;
  c.protocol_errors = 173;
  c.auth_failures = 179;
  c.denied = 181;
  c.bytes_in = 191;
  c.bytes_out = 193;
  c.executables_started = 197;
  c.warm_hits = 199;
  c.executables_reused = 211;
  c.warm_misses = 223;

  // status line -> the metric sample that carries it, with the same value
  // (a whole line, value included, for words carried as labels; "": not
  // exported, with the reason in the comment).
  const std::string config_info =
      "ninf_config_info{admission=\"arrival\",queue_order=\"fifo\",thread_budget=\"fair\"} 1";
  const std::map<std::string, std::string> carried = {
      {"version", "ninf_build_info{version=\"9.9\"} 1"},
      {"pid", ""},  // the target's identity; process_start_time_seconds tells restarts
      {"uptime_seconds", "ninf_uptime_seconds"},
      {"cores", "ninf_cores"},
      {"slots", "ninf_slots"},
      {"threads_per_job", "ninf_threads_per_job"},
      {"thread_budget", config_info},
      {"queue_order", config_info},
      {"admission", config_info},
      {"queue_limit", "ninf_queue_limit"},
      {"max_call_bytes", "ninf_max_call_bytes"},
      {"functions", "ninf_functions"},
      {"running", "ninf_slots_busy"},
      {"queued", "ninf_queue_length"},
      {"arrival_limit", "ninf_arrival_limit"},
      {"arrival_bytes", "ninf_arrival_bytes_limit"},
      {"arrival_waiting", "ninf_arrival_waiting"},
      {"arrival_waiting_bytes", "ninf_arrival_waiting_bytes"},
      {"arrival_held", "ninf_arrival_calls"},
      {"arrival_held_bytes", "ninf_arrival_bytes"},
      {"arriving", "ninf_arguments_arriving"},
      {"held", "ninf_arguments_held"},
      {"held_bytes", "ninf_arguments_held_bytes"},
      {"threads_held", "ninf_threads_held"},
      {"brief_running", "ninf_brief_running"},
      {"busy_core_seconds", "ninf_busy_core_seconds_total"},
      {"queue_seconds", "ninf_queue_seconds_total"},
      {"jobs", "ninf_executables{state=\"live\"}"},
      {"connections", "ninf_connections"},
      {"connections_accepted", "ninf_connections_accepted_total"},
      {"completed", "ninf_calls_ended_total{outcome=\"completed\"}"},
      {"failed", "ninf_calls_ended_total{outcome=\"failed\"}"},
      {"cancelled", "ninf_calls_ended_total{outcome=\"cancelled\"}"},
      {"rejected", "ninf_calls_ended_total{outcome=\"rejected\"}"},
      {"protocol_errors", "ninf_protocol_errors_total"},
      {"auth_failures", "ninf_auth_failures_total"},
      {"denied", "ninf_calls_denied_total"},
      {"bytes_in", "ninf_bytes_total{direction=\"in\"}"},
      {"bytes_out", "ninf_bytes_total{direction=\"out\"}"},
      {"executables_started", "ninf_executables_started_total"},
      {"warm_executables", "ninf_warm_executables"},
      {"warm_idle", "ninf_executables{state=\"warm_idle\"}"},
      {"warm_hits", "ninf_warm_hits_total"},
      {"executables_reused", "ninf_executables_reused_total"},
      {"warm_misses", "ninf_warm_misses_total"},
      {"persistent_executables", "ninf_executables{state=\"persistent\"}"},
      {"kept_slots", "ninf_kept_slots"},
      {"kept_slot_calls", "ninf_kept_slot_calls_total"},
      {"store_entries", "ninf_store_entries"},
      {"store_bytes", "ninf_store_bytes"},
      {"store_cap", "ninf_store_cap_bytes"},
      {"store_stored", "ninf_store_stored_total"},
      {"store_refused", "ninf_store_refused_total"},
      {"store_expired", "ninf_store_expired_total"},
      {"store_released", "ninf_store_released_total"},
      {"store_served_bytes", "ninf_store_served_bytes_total"},
      {"store_descriptors", "ninf_store_descriptors"},
      {"load_average_1", "ninf_load_average_1"},
  };
  const std::string text = FormatPrometheus(g, c);
  for (const auto &[name, value] : Parse(FormatStats(g, c))) {
    if (name.find('.') != std::string::npos) continue;  // function.*, user.*
    INFO("status line " << name << ":" << value);
    auto it = carried.find(name);
    REQUIRE(it != carried.end());  // a new status line: export it, then list it here
    if (it->second.empty()) continue;
    if (it->second.find(' ') != std::string::npos) {  // a whole line
      CHECK_THAT(text, Catch::Contains("\n" + it->second + "\n"));
      continue;
    }
    char *end = nullptr;
    const double number = std::strtod(value.c_str(), &end);
    REQUIRE(*end == '\0');  // a number
    CHECK_THAT(text, Catch::Contains("\n" + it->second + " " +
                                     ninf::daemon::PrometheusText::Number(number) + "\n"));
  }
}

TEST_CASE("stats_table_rows_keep_the_rules", "[stats]") {
  using ninf::daemon::StatRowProblems;
  CHECK(StatRowProblems(GlobalStatRows()).empty());
  CHECK(StatRowProblems(FunctionStatRows()).empty());
  CHECK(StatRowProblems(UserStatRows()).empty());
  std::set<std::string> families;
  for (const ninf::daemon::FamilyDoc &family : StatFamilies())
    CHECK(families.insert(family.name).second);  // no family in two tables
}

TEST_CASE("stats_status_and_metrics_are_written_from_the_table", "[stats]") {
  // A function's and a user's rows as both texts show them.
  Gauges g;
  g.users = {{"alice", 2, 3, 4}};
  Counters c;
  c.RecordCall("ep", CallOutcome::kFailed, 0, 0, 0);
  c.RecordUserCall("alice", CallOutcome::kCancelled);
  const auto s = Parse(FormatStats(g, c));
  // One user's view: its own lines only, or none; the rest as for all.
  Gauges two = g;
  two.users.push_back({"bob", 1, 0, 0});
  const std::string alice = "alice", nobody;
  const auto own = Parse(FormatStats(two, c, &alice));
  CHECK(own.at("user.alice.calls") == "1");
  CHECK(own.count("user.bob.running") == 0);
  CHECK(own.at("function.ep.failed") == "1");
  const auto none = Parse(FormatStats(two, c, &nobody));
  CHECK(none.count("user.alice.calls") == 0);
  CHECK(none.count("user.bob.running") == 0);
  CHECK(Parse(FormatStats(two, c)).at("user.bob.running") == "1");
  CHECK(s.at("function.ep.failed") == "1");
  CHECK(s.at("user.alice.calls") == "1");
  CHECK(s.at("user.alice.running") == "2");
  CHECK(s.count("user.alice.cancelled") == 0);  // a metric only
  const std::string text = FormatPrometheus(g, c);
  CHECK_THAT(text,
             Catch::Contains("\nninf_user_calls_total{user=\"alice\",outcome=\"cancelled\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("\nninf_user_store_bytes{user=\"alice\"} 4\n"));
  CHECK_THAT(text, Catch::Contains("\nninf_calls_total{function=\"ep\",outcome=\"failed\"} 1\n"));
  // Each family's HELP and TYPE once.
  std::size_t heads = 0;
  for (std::size_t at = 0;
       (at = text.find("# TYPE ninf_executables gauge\n", at)) != std::string::npos; ++at)
    ++heads;
  CHECK(heads == 1);
}
