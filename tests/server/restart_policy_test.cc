// Unit tests of the warm pool's restart policy (server/warm_policy.h):
// rate limit, give-up after early deaths, and what ends a series.
#include <catch2/catch.hpp>

#include "server/warm_policy.h"

using namespace ninf::server;
using namespace std::chrono_literals;
using Clock = RestartPolicy::Clock;

TEST_CASE("restart_policy_nothing_pending_at_first", "[restart]") {
  RestartPolicy p;
  CHECK_FALSE(p.Due());
  CHECK_FALSE(p.TakeRestart(Clock::now()));
  CHECK_FALSE(p.given_up());
}

TEST_CASE("restart_policy_first_restart_at_once_then_one_per_second", "[restart]") {
  RestartPolicy p;
  const Clock::time_point t0 = Clock::now();
  p.OnIdleDeath(30s);  // an old process, killed
  REQUIRE(p.Due());
  CHECK(p.TakeRestart(t0));
  CHECK_FALSE(p.Due());  // granted, no longer pending
  p.OnIdleDeath(30s);
  CHECK(*p.Due() == t0 + 1s);
  CHECK_FALSE(p.TakeRestart(t0 + 999ms));
  CHECK(p.TakeRestart(t0 + 1s));
  CHECK(p.early_deaths() == 0);  // old deaths are not early
  CHECK_FALSE(p.given_up());
}

TEST_CASE("restart_policy_gives_up_after_consecutive_early_deaths", "[restart]") {
  RestartPolicy p;
  Clock::time_point t = Clock::now();
  for (int i = 1; i < RestartPolicy::kMaxEarlyDeaths; ++i) {
    CHECK_FALSE(p.OnIdleDeath(5ms));
    CHECK(p.early_deaths() == i);
    REQUIRE(p.Due());
    t = std::max(t, *p.Due());
    CHECK(p.TakeRestart(t));
  }
  CHECK(p.OnIdleDeath(5ms));  // the last straw: gives up now
  CHECK(p.given_up());
  CHECK_FALSE(p.Due());
  CHECK_FALSE(p.TakeRestart(t + 1h));
  CHECK_FALSE(p.OnIdleDeath(5ms));  // reported once only
  CHECK(p.given_up());
}

TEST_CASE("restart_policy_spawn_failures_count_as_early_deaths", "[restart]") {
  RestartPolicy p;
  for (int i = 1; i < RestartPolicy::kMaxEarlyDeaths; ++i) CHECK_FALSE(p.OnSpawnFailed());
  CHECK(p.OnSpawnFailed());
  CHECK(p.given_up());
}

TEST_CASE("restart_policy_healthy_start_ends_the_series", "[restart]") {
  RestartPolicy p;
  for (int i = 1; i < RestartPolicy::kMaxEarlyDeaths; ++i) p.OnIdleDeath(1ms);
  p.OnTaken();  // one lived until a call took it
  CHECK(p.early_deaths() == 0);
  for (int i = 1; i < RestartPolicy::kMaxEarlyDeaths; ++i) CHECK_FALSE(p.OnIdleDeath(1ms));
  CHECK_FALSE(p.given_up());
  p.OnIdleDeath(RestartPolicy::kEarlyDeath);  // so does one that dies old
  CHECK(p.early_deaths() == 0);
}
