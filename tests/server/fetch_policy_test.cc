// server/fetch_policy.h: which addresses a data reference may name.
#include "server/fetch_policy.h"

#include <catch2/catch.hpp>

using ninf::server::FetchPeers;
using ninf::server::MayFetchFrom;
using ninf::server::ParseFetchFrom;

namespace {

FetchPeers Peers() {
  FetchPeers p;
  p.own_port = 3000;
  p.own_unix_path = "/tmp/ninfd-3000.sock";
  p.local_ips = {"127.0.0.1", "10.0.0.5", "::1"};
  return p;
}

}  // namespace

TEST_CASE("fetch_policy_lets_ninfd_read_from_itself_on_any_of_its_addresses", "[fetch]") {
  const FetchPeers p = Peers();
  CHECK(MayFetchFrom("127.0.0.1:3000", p).ok());
  CHECK(MayFetchFrom("10.0.0.5:3000", p).ok());
  CHECK(MayFetchFrom("[::1]:3000", p).ok());
  CHECK(MayFetchFrom("unix:/tmp/ninfd-3000.sock", p).ok());
  // Another port of this host is another program.
  CHECK(MayFetchFrom("127.0.0.1:22", p).code() == NINF_ERR_AUTH);
  CHECK(MayFetchFrom("unix:/run/docker.sock", p).code() == NINF_ERR_AUTH);
}

TEST_CASE("fetch_policy_refuses_what_no_list_names_and_says_what_to_set", "[fetch]") {
  FetchPeers p = Peers();
  for (const char *hostile : {"10.0.0.9:3000", "169.254.169.254:80", "not an address", "", "host:0",
                              "unix:", "relayname@10.0.0.9:3300"}) {
    const ninf::Status st = MayFetchFrom(hostile, p);
    CHECK(st.code() == NINF_ERR_AUTH);
    CHECK_THAT(st.message(), Catch::Contains("fetch_from"));
  }
  p.configured = {"10.0.0.9:3000", "unix:/tmp/ninfd-4000.sock"};
  CHECK(MayFetchFrom("10.0.0.9:3000", p).ok());
  CHECK(MayFetchFrom("unix:/tmp/ninfd-4000.sock", p).ok());
  CHECK(MayFetchFrom("10.0.0.9:3001", p).code() == NINF_ERR_AUTH);
}

TEST_CASE("fetch_policy_follows_the_metaserver_list_and_waits_for_a_fresh_one", "[fetch]") {
  FetchPeers p = Peers();
  p.metaserver = true;
  p.listed = {"node7.example.org:3000", "10.0.0.7:3000", "[fe80::1]:3000"};
  CHECK(MayFetchFrom("10.0.0.7:3000", p).ok());
  CHECK(MayFetchFrom("[fe80::1]:3000", p).ok());
  // Not listed (yet): the executable asks again once the list is fresh.
  CHECK(MayFetchFrom("10.0.0.8:3000", p).code() == NINF_ERR_TIMEOUT);
  // A same-host socket is never on a metaserver's list, nor is what is no
  // address at all: refused at once.
  CHECK(MayFetchFrom("unix:/run/docker.sock", p).code() == NINF_ERR_AUTH);
  CHECK(MayFetchFrom("not an address", p).code() == NINF_ERR_AUTH);
}

TEST_CASE("fetch_from_parses_addresses_and_names_a_bad_one", "[fetch]") {
  std::set<std::string> out;
  REQUIRE(ParseFetchFrom("", &out).ok());
  CHECK(out.empty());
  REQUIRE(ParseFetchFrom(" 10.0.0.9:3000 ,unix:/tmp/x.sock,, [::1]:3000 ", &out).ok());
  CHECK(out == std::set<std::string>{"10.0.0.9:3000", "unix:/tmp/x.sock", "[::1]:3000"});
  const ninf::Status st = ParseFetchFrom("10.0.0.9:3000,bogus", &out);
  CHECK(st.code() == NINF_ERR_CONFIG);
  CHECK_THAT(st.message(), Catch::Contains("'bogus'"));
}
