// The load test's records and summary (loadtest/report.h): pure functions.
#include "loadtest/report.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "loadtest/cgroup.h"
#include "loadtest/progress.h"
#include "loadtest/run.h"
#include "loadtest/servers.h"

using namespace ninf::loadtest;

namespace {

CallRow Row(int client, double start, double response, double wait, const char *outcome = "ok") {
  CallRow r;
  r.client = client;
  r.start = start;
  r.response = response;
  r.wait = wait;
  r.transfer = 0.5;
  r.compute = response - wait - 0.5;
  r.bytes = 1000000;
  r.flops = 2e9;
  r.server = "127.0.0.1:3000";
  r.threads = 2;
  r.outcome = outcome;
  return r;
}

}  // namespace

TEST_CASE("loadtest_csv_row_round_trips", "[loadtest]") {
  CallRow r = Row(3, 1.25, 2.0, 0.25, "error");
  r.step = 7;
  r.size = 1500;
  r.detail = "server busy, try later\nreally";  // commas and newlines do not break the row
  CallRow back;
  REQUIRE(ParseCsvRow(FormatCsvRow(r), &back));
  CHECK(back.client == 3);
  CHECK(back.step == 7);
  CHECK(back.size == 1500);
  CHECK(back.start == Approx(1.25));
  CHECK(back.response == Approx(2.0));
  CHECK(back.wait == Approx(0.25));
  CHECK(back.bytes == 1000000);
  CHECK(back.flops == Approx(2e9));
  CHECK(back.server == "127.0.0.1:3000");
  CHECK(back.threads == 2);
  CHECK(back.outcome == "error");
  CHECK(back.detail == "server busy  try later really");
  CHECK_FALSE(ParseCsvRow("1,2,3", &back));
  CHECK_FALSE(ParseCsvRow(CsvHeader(), &back));  // the header is not a row
  CHECK(Describe({}).count == 0);
}

TEST_CASE("loadtest_summary_in_the_seed_tables_form", "[loadtest]") {
  // Two clients, four calls of 2 GF each; one failed.
  std::vector<CallRow> rows = {Row(0, 0.0, 1.0, 0.0), Row(1, 0.0, 2.0, 1.0), Row(0, 1.0, 1.0, 0.0),
                               Row(1, 2.0, 2.0, 0.5, "wrong")};
  // The server was busy 2 cores x 3 s of its 4 s x 2 cores: utilization 0.75.
  std::map<std::string, std::vector<ServerSample>> samples;
  samples["s"] = {ParseSample("cores:2\nbusy_core_seconds:10.0\nrunning:2\nqueued:1\n"
                              "load_average_1:1.50\n",
                              0.0),
                  ParseSample("cores:2\nbusy_core_seconds:16.0\nrunning:0\nqueued:0\n"
                              "load_average_1:0.50\nnot_a_number:x\n",
                              4.0)};
  Summary s = Summarize(rows, samples);
  CHECK(s.calls == 4);
  CHECK(s.failed == 1);
  CHECK(s.duration == Approx(4.0));  // first start 0, last end 2 + 2
  CHECK(s.mflops.max == Approx(2000));
  CHECK(s.mflops.min == Approx(1000));
  CHECK(s.mflops.mean == Approx((2000 + 1000 + 2000) / 3.0));
  CHECK(s.throughput.mean == Approx(2.0));  // 1 MB in 0.5 s
  CHECK(s.response_mean == Approx(4.0 / 3));
  CHECK(s.response_p95 == Approx(2.0));
  CHECK(s.wait_mean == Approx(1.0 / 3));
  CHECK(s.wait_max == Approx(1.0));
  CHECK(s.aggregate_gflops == Approx(6e9 / 4.0 / 1e9));
  CHECK(s.utilization.at("s") == Approx(0.75));
  CHECK(s.load_average.at("s") == Approx(1.0));
  CHECK(s.jobs.at("s") == Approx(1.5));

  const std::string md = MarkdownRow("adaptive", "linpack", "600", 2, s);
  CHECK_THAT(md,
             Catch::StartsWith("| adaptive | linpack | 600 | 2 | 4 | 1 | 2000 / 1000 / 1667 |"));
  CHECK_THAT(md, Catch::Contains("| 0.75 |"));
  const std::string header = MarkdownHeader();
  const std::string first_line = header.substr(0, header.find('\n'));
  CHECK(std::count(md.begin(), md.end(), '|') ==
        std::count(first_line.begin(), first_line.end(), '|'));
  const std::string csv = SummaryCsvRow("adaptive", "linpack", "600", 2, s);
  CHECK_THAT(csv, Catch::StartsWith("adaptive,linpack,600,2,4,1,"));
  // Not measured (no control group): an empty cpu_util, not a 0.
  CHECK_THAT(csv, Catch::Contains(",1.5000,0.7500,,1.000,1.500,"));
  // Throughput max and min; 3 MB in 4 s; across the servers (one here):
  // booked 0.75, no cgroup, running 1, queued 0.5, jobs 1.5; none unreachable.
  // Calls in flight: T_responses 1 + 2 + 1 + 2 in 4 s.
  CHECK_THAT(csv, Catch::EndsWith(",2.00,2.00,0.750,0.7500,,1.000,0.500,1.500,0,1.500\n"));
  CHECK(s.total.utilization == Approx(0.75));
  CHECK(s.total.cpu_utilization < 0);
}

TEST_CASE("loadtest_mixed_sizes_are_summarized_per_size", "[loadtest]") {
  // Small jobs (n = 200) that waited 0.5 s and 0 s, a large one (1500) that
  // waited 1 s, and a failed small one that counts but has no times.
  std::vector<CallRow> rows = {Row(0, 0.0, 1.0, 0.5), Row(1, 0.0, 3.0, 1.0), Row(0, 1.0, 0.5, 0.0),
                               Row(1, 3.0, 9.0, 9.0, "error")};
  for (int i : {0, 2, 3}) rows[static_cast<std::size_t>(i)].size = 200;
  rows[1].size = 1500;
  const Summary s = Summarize(rows, {});
  REQUIRE(s.by_size.size() == 2);
  const Summary::BySize &small = s.by_size.at(200), &large = s.by_size.at(1500);
  CHECK(small.calls == 3);
  CHECK(small.failed == 1);
  CHECK(small.response_mean == Approx(0.75));
  CHECK(small.response_p95 == Approx(1.0));
  CHECK(small.wait_mean == Approx(0.25));
  CHECK(small.wait_max == Approx(0.5));
  CHECK(large.calls == 1);
  CHECK(large.wait_max == Approx(1.0));
  CHECK(SizesText({200, 1500}) == "200+1500");
  const std::string table = SizeTable(s);
  CHECK_THAT(table, Catch::Contains("| 200 | 3 | 1 | 0.750 / 1.000 | 0.250 / 0.500 |"));
  CHECK_THAT(table, Catch::Contains("| 1500 | 1 | 0 | 3.000 / 3.000 | 1.000 / 1.000 |"));
}

TEST_CASE("loadtest_site_table_groups_the_clients_by_their_namespace", "[loadtest]") {
  // Five clients over two sites: 0, 2, 4 in a, 1, 3 in b (client i in
  // sites[i % 2]); client 4 made no call. b's second call failed.
  std::vector<CallRow> rows = {Row(0, 0.0, 1.0, 0.5), Row(2, 0.0, 3.0, 0.0), Row(1, 1.0, 0.5, 0.0),
                               Row(3, 3.0, 9.0, 9.0, "error")};
  rows[0].bytes = 8000000;
  rows[0].transfer = 0.5;  // 16 MB/s; the others 2 MB/s
  const std::string table = SiteTable(rows, {"a", "b"}, 5);
  CHECK_THAT(table, Catch::StartsWith("| site | clients | calls | failed |"));
  CHECK_THAT(table, Catch::Contains("| a | 3 | 2 | 0 | 2.000 / 3.000 | 0.250 / 0.500 | 9.0 |"));
  CHECK_THAT(table, Catch::Contains("| b | 2 | 2 | 1 | 0.500 / 0.500 | 0.000 / 0.000 | 2.0 |"));
}

TEST_CASE("loadtest_percentile_by_nearest_rank", "[loadtest]") {
  CHECK(Percentile({}, 95) == 0);
  CHECK(Percentile({3, 1, 2}, 50) == 2);
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  CHECK(Percentile(v, 95) == 95);
  CHECK(Percentile(v, 100) == 100);
  CHECK(Percentile(v, 0) == 1);
}

TEST_CASE("loadtest_cgroup_files_parse", "[loadtest]") {
  CHECK(ParseCpuStatUsec("usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n") ==
        Approx(1500000));
  // v1's cpu hierarchy has a cpu.stat without usage_usec: not a v2 group.
  CHECK_FALSE(ParseCpuStatUsec("nr_periods 0\nnr_throttled 0\nthrottled_time 0\n"));
  CHECK(ParseCpuacctNs("2500000000\n") == Approx(2.5e9));
  CHECK_FALSE(ParseCpuacctNs("x"));
  CHECK(CountCpuList("0-3,6\n") == 5);
  CHECK(CountCpuList("1") == 1);
  CHECK(CountCpuList("") == 0);
  CHECK(CountCpuList("3-1") == 0);
  CHECK(CountCpuList("a-b") == 0);
}

TEST_CASE("loadtest_cpu_util_is_measured_beside_the_booked", "[loadtest]") {
  // Booked: 1 core-second of routine in 4 s on 2 cores (0.125); measured:
  // the group used 6 CPU-seconds of its 2 CPUs' 8 (0.75), e.g. transfers,
  // data handling and oversubscription that booking does not see.
  auto at = [](double t, double busy, double cpu) {
    ServerSample x = ParseSample("cores:2\nbusy_core_seconds:" + std::to_string(busy) + "\n", t);
    x.cpu_seconds = cpu;
    x.cpu_count = 2;
    x.cgroup = "/sys/fs/cgroup/g";
    return x;
  };
  std::map<std::string, std::vector<ServerSample>> samples;
  samples["s"] = {at(0, 10, 100), at(2, 10.5, 103), at(4, 11, 106)};
  // A sample whose statistics query failed still carries the group's time.
  ServerSample cpu_only;
  cpu_only.at = 5;
  cpu_only.cpu_seconds = 107.5;
  cpu_only.cpu_count = 2;
  samples["s"].push_back(cpu_only);
  const Summary s = Summarize({}, samples);
  CHECK(s.utilization.at("s") == Approx(0.125));
  CHECK(s.cpu_utilization.at("s") == Approx(7.5 / 10));
  CHECK_THAT(MarkdownRow("r", "linpack", "600", 1, s), Catch::Contains("| 0.12 | 0.75 |"));
  CHECK_THAT(SummaryCsvRow("r", "linpack", "600", 1, s), Catch::Contains(",0.1250,0.7500,"));
}

TEST_CASE("loadtest_random_phases_spread_the_first_ticks", "[loadtest]") {
  using Phase = RunConfig::Phase;
  CHECK(FirstTickOffset(Phase::kAligned, 3.0, 5) == 0);
  CHECK(FirstTickOffset(Phase::kRandom, 0.0, 5) == 0);  // a closed loop has no phase
  double lo = 3, hi = 0;
  for (int i = 0; i < 16; ++i) {
    const double x = FirstTickOffset(Phase::kRandom, 3.0, i);
    CHECK(x >= 0);
    CHECK(x < 3.0);
    CHECK(x == FirstTickOffset(Phase::kRandom, 3.0, i));  // seeded: the same every run
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  CHECK(hi - lo > 1.5);  // spread over the interval, not one burst
}

namespace {

std::vector<std::string> Split(const std::string &line, char sep) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, sep)) {
    while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\n')) cell.pop_back();
    while (!cell.empty() && cell.front() == ' ') cell.erase(0, 1);
    if (!cell.empty()) out.push_back(cell);
  }
  return out;
}

// The columns of a CSV header, or of a Markdown table's first line.
std::vector<std::string> Columns(const std::string &header) {
  const std::string first = header.substr(0, header.find('\n'));
  return first.rfind('|', 0) == 0 ? Split(first, '|') : Split(first, ',');
}

// The `names` of the first cells of the table under the heading that
// starts with `heading` in docs/loadtest.md.
std::vector<std::string> Documented(const std::string &doc, const std::string &heading) {
  std::vector<std::string> names;
  std::size_t at = doc.find("\n" + heading);
  if (at == std::string::npos) return names;
  std::istringstream in(doc.substr(doc.find('\n', at + 1) + 1));
  std::string line;
  bool table = false;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) == 0) break;
    if (line.rfind("| `", 0) != 0) {
      if (table && line.empty()) break;
      continue;
    }
    table = true;
    const std::size_t end = line.find("` |");
    if (end != std::string::npos) names.push_back(line.substr(3, end - 3));
  }
  return names;
}

}  // namespace

// One list per fact: each output's header (made by report.cc) and its table
// in docs/loadtest.md's "Columns" hold the same names in the same order.
TEST_CASE("loadtest_every_column_is_documented", "[loadtest]") {
  const char *path = std::getenv("NINF_LOADTEST_DOC");
  REQUIRE(path != nullptr);
  std::ifstream in(path);
  REQUIRE(in);
  std::ostringstream all;
  all << in.rdbuf();
  const std::string doc = all.str();
  const std::pair<const char *, std::string> outputs[] = {
      {"### Calls CSV", CsvHeader()},
      {"### Run table", MarkdownHeader()},
      {"### Per-size table", SizeTable(Summary{})},
      {"### Per-site table", SiteTable({}, {"a"}, 1)},
      {"### Per-server table", ServerTable(Summary{})},
      {"### Summary CSV", SummaryCsvHeader()},
      {"### Series CSV", SeriesCsvHeader()},
  };
  for (const auto &[heading, header] : outputs) {
    INFO(heading);
    CHECK(Documented(doc, heading) == Columns(header));
  }
}

TEST_CASE("loadtest_progress_fraction_and_sampling_warning", "[loadtest]") {
  // By time with a known end: a duration, or steps x interval.
  CHECK(FractionDone(Plan{4, 3.0, 0.5, 60, 0}, 15, 0) == Approx(0.25));
  CHECK(FractionDone(Plan{4, 0.5, 1, 0, 10}, 2.5, 0) == Approx(0.5));
  // A closed loop of steps: the calls made against c x steps x p.
  CHECK(FractionDone(Plan{2, 0, 0.5, 0, 100}, 1, 50) == Approx(0.5));
  // Never 100 % before the last call is back.
  CHECK(FractionDone(Plan{1, 0, 1, 10, 0}, 30, 0) == Approx(0.99));
  // The warning names the fix for a key that is missing, and what shows '-'.
  const std::string auth = SamplingFailure("h:1", ninf::Status(NINF_ERR_AUTH, "no key"));
  CHECK_THAT(auth, Catch::Contains("cannot sample server h:1"));
  CHECK_THAT(auth, Catch::Contains("--key-file"));
  CHECK_THAT(auth, Catch::Contains("NINF_KEY_FILE"));
  CHECK_THAT(SamplingFailure("h:1", ninf::Status(NINF_ERR_CONNECT, "refused")),
             Catch::Contains("running, and listening"));
}

TEST_CASE("loadtest_series_per_second", "[loadtest]") {
  // One server sampled at 0, 1 and 2 s: 2 cores, booked 1 then 2
  // core-seconds a second (0.5, 1.0), its group 1.5 then 0.5 CPU-seconds of
  // 2 CPUs (0.75, 0.25). Three calls: two end in second 0 (one failed), one
  // in second 1; a call at another server ends in second 1.
  auto at = [](double t, double busy, double cpu, int running, int queued) {
    ServerSample x = ParseSample("cores:2\nbusy_core_seconds:" + std::to_string(busy) +
                                     "\nrunning:" + std::to_string(running) +
                                     "\nqueued:" + std::to_string(queued) + "\n",
                                 t);
    x.cpu_seconds = cpu;
    x.cpu_count = 2;
    x.cgroup = "g";
    return x;
  };
  std::map<std::string, std::vector<ServerSample>> samples;
  samples["s"] = {at(0, 10, 100, 2, 1), at(0.5, 10.5, 100.5, 2, 0), at(1, 11, 101.5, 1, 0),
                  at(2, 13, 102, 0, 0)};
  std::vector<CallRow> rows = {Row(0, 0.0, 0.5, 0), Row(1, 0.2, 0.3, 0, "error"),
                               Row(0, 0.6, 0.9, 0)};
  for (CallRow &r : rows) r.server = "s";
  CallRow other = Row(2, 1.0, 0.5, 0);
  other.server = "t";
  rows.push_back(other);
  const std::string csv = SeriesCsv(rows, samples, 2.0);
  std::istringstream in(csv);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  REQUIRE(lines.size() == 1 + 2 * 3);  // header, 2 seconds x (s, t, all)
  CHECK(lines[0] + "\n" == SeriesCsvHeader());
  // Second 0 at s: running (2+2)/2, queued (1+0)/2, booked 1/(1 x 2), measured
  // 1.5/(1 x 2), two calls (one failed), 2 GF and 1 MB of the one that worked.
  CHECK(lines[1] == "0,s,2.00,0.50,0.5000,0.7500,2,1,2.0000,1.000");
  CHECK(lines[2] == "0,t,,,,,0,0,0.0000,0.000");  // never sampled: empty, not 0
  CHECK(lines[3] == "0,all,2.00,0.50,0.5000,0.7500,2,1,2.0000,1.000");
  CHECK(lines[4] == "1,s,1.00,0.00,1.0000,0.2500,1,0,2.0000,1.000");
  CHECK(lines[5] == "1,t,,,,,1,0,2.0000,1.000");
  CHECK(lines[6] == "1,all,1.00,0.00,1.0000,0.2500,2,0,4.0000,2.000");
}
