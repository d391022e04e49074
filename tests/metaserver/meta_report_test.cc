// Unit tests of ninf-meta's texts (metaserver/meta_report.h): written from a
// real server table, without a daemon.
#include "metaserver/meta_report.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace ninf::meta;

namespace {

Registration Reg(const std::string &id, const std::string &address,
                 std::vector<std::string> functions) {
  Registration r;
  r.id = id;
  r.address = address;
  r.site = id == "a" ? "east" : "";
  r.slots = 2;
  r.flops_per_second = 1e9;
  r.lease_seconds = 3;
  r.functions = std::move(functions);
  return r;
}

std::size_t Lines(const std::string &text) { return std::count(text.begin(), text.end(), '\n'); }

}  // namespace

TEST_CASE("meta_report_servers_one_line_each_with_the_time_since_heard", "[meta_report]") {
  ServerTable t;
  t.Register(Reg("a", "h:1", {"dgesv", "ep"}), 10);
  t.Register(Reg("b", "h:2", {"ep", "null"}), 12);
  const std::string text = ServersText(t, 15);
  CHECK(Lines(text) == 3);  // the header and two servers
  CHECK_THAT(text, Catch::Contains("\na h:1 east 2 0 0 0 0 "));
  CHECK_THAT(text, Catch::Contains(" 5.0 2\n"));      // a: heard 5 s ago, 2 functions
  CHECK_THAT(text, Catch::Contains("\nb h:2 - 2 "));  // no site: "-"
  CHECK_THAT(text, Catch::Contains(" 3.0 2\n"));
  CHECK(FunctionCount(t) == 3);  // dgesv, ep, null: ep counted once
}

TEST_CASE("meta_report_links_show_the_most_recent_and_count_the_rest", "[meta_report]") {
  ServerTable t;
  t.set_link_caps(kShownLinks + 10, kShownLinks + 10);
  for (std::size_t i = 0; i < kShownLinks + 4; ++i)
    t.LinkTo("site" + std::to_string(i), "h:1").AddProbe(1000, 0.01, 1000000, 0.02, 1);
  const std::string links = LinksText(t, 2);
  CHECK(Lines(links) == 1 + kShownLinks + 1);  // header, the shown, "# 4 ... not shown"
  CHECK_THAT(links, Catch::Contains("\n# 4 less recently used links not shown\n"));
  // The last one used comes first; the first one used is among those left out.
  CHECK(links.find("\nsite" + std::to_string(kShownLinks + 3) + " h:1 ") <
        links.find("\nsite" + std::to_string(kShownLinks + 2) + " h:1 "));
  CHECK(links.find("\nsite0 h:1 ") == std::string::npos);

  // /metrics carries the same shown links and no more.
  const std::string metrics = MetricsText(MetaGauges{}, MetaCounters{}, t);
  CHECK_THAT(metrics, Catch::Contains("site=\"site" + std::to_string(kShownLinks + 3) + "\""));
  CHECK(metrics.find("site=\"site0\"") == std::string::npos);
  CHECK(metrics.find("site=\"site3\"") == std::string::npos);
  CHECK_THAT(metrics, Catch::Contains("site=\"site4\""));
}
