// ninf-meta's forecasts (metaserver/forecast.h): the NWS-style ensemble
// and the link model built on it.
#include "metaserver/forecast.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>

using namespace ninf::meta;

TEST_CASE("forecast_nothing_before_the_first_sample", "[forecast]") {
  Forecaster f;
  CHECK_FALSE(f.Predict().valid);
  f.Add(3.5);
  const auto p = f.Predict();
  CHECK(p.valid);
  CHECK(p.value == 3.5);
  CHECK(p.error == 0);
  CHECK(p.method == "last");
}

TEST_CASE("forecast_a_constant_series_has_no_error", "[forecast]") {
  Forecaster f;
  for (int i = 0; i < 50; ++i) f.Add(100.0);
  CHECK(f.Predict().value == Approx(100.0));
  CHECK(f.Predict().error == Approx(0.0).margin(1e-9));
}

TEST_CASE("forecast_noise_is_averaged_not_followed", "[forecast]") {
  // A stationary link with +-20% noise: the last value is the worst guess;
  // whatever wins must be a smoothing method and close to the true mean.
  Forecaster f;
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> noise(80, 120);
  for (int i = 0; i < 200; ++i) f.Add(noise(rng));
  const auto p = f.Predict();
  CHECK(p.method != "last");
  CHECK(p.value == Approx(100).margin(8));
  CHECK(p.error > 5);  // the noise shows in the error it reports
  CHECK(p.error < 20);
}

TEST_CASE("forecast_a_step_is_followed_within_a_few_samples", "[forecast]") {
  // The link drops from 1000 to 100 and stays there: after a dozen samples
  // the forecast must be near 100, not near the long-run mean.
  Forecaster f;
  for (int i = 0; i < 60; ++i) f.Add(1000);
  for (int i = 0; i < 12; ++i) f.Add(100);
  CHECK(f.Predict().value == Approx(100).margin(10));
}

TEST_CASE("forecast_ignores_non_finite_samples", "[forecast]") {
  Forecaster f;
  f.Add(1.0);
  f.Add(std::numeric_limits<double>::infinity());
  f.Add(std::nan(""));
  CHECK(f.samples() == 1);
  CHECK(f.Predict().value == 1.0);
}

TEST_CASE("link_two_size_probe_separates_latency_and_bandwidth", "[forecast]") {
  // 2 ms latency, 12.5 MB/s (100 Mbit/s): 64 KiB takes 2 ms + 5.24 ms,
  // 1 MiB takes 2 ms + 83.9 ms.
  const double latency = 0.002, bandwidth = 12.5e6;
  auto t = [&](double bytes) { return latency + bytes / bandwidth; };
  LinkModel link;
  CHECK(link.NeedsProbe(0, 120));
  REQUIRE(link.AddProbe(65536, t(65536), 1 << 20, t(1 << 20), 10.0));
  const auto e = link.Current();
  CHECK(e.latency_seconds == Approx(latency));
  CHECK(e.bandwidth_bytes_per_second == Approx(bandwidth));
  CHECK(e.last_sample_at == 10.0);
  CHECK_FALSE(link.NeedsProbe(100, 120));
  CHECK(link.NeedsProbe(131, 120));
}

TEST_CASE("link_probe_is_asked_of_one_client_until_its_sample_or_the_wait", "[forecast]") {
  // 256 clients of one host asking at once: only the first is asked.
  LinkModel link;
  CHECK(link.ShouldAskProbe(0, 60, 30));
  link.ProbeAsked(0);
  CHECK_FALSE(link.ShouldAskProbe(0.1, 60, 30));
  CHECK_FALSE(link.ShouldAskProbe(29.9, 60, 30));
  // The prober never reported: another client is asked after the wait.
  CHECK(link.ShouldAskProbe(30, 60, 30));
  link.ProbeAsked(30);
  // Its sample makes the link fresh; once that ages, the next asks again
  // at once (the earlier ask is done).
  REQUIRE(link.AddProbe(1024, 0.001, 1 << 20, 0.1, 31));
  CHECK_FALSE(link.ShouldAskProbe(32, 60, 30));
  CHECK(link.ShouldAskProbe(92, 60, 30));
  // The prober came back without a sample (ProbeFailed): asked at once.
  LinkModel failed;
  failed.ProbeAsked(1);
  CHECK_FALSE(failed.ShouldAskProbe(2, 60, 30));
  failed.ProbeFailed();
  CHECK(failed.ShouldAskProbe(2, 60, 30));
  // A wait of 0: every client is asked, as before the wait existed.
  LinkModel every;
  every.ProbeAsked(5);
  CHECK(every.ShouldAskProbe(5, 60, 0));
}

TEST_CASE("link_unusable_probes_are_refused", "[forecast]") {
  LinkModel link;
  CHECK_FALSE(link.AddProbe(1 << 20, 0.1, 65536, 0.2, 0));  // sizes not increasing
  CHECK_FALSE(link.AddProbe(65536, 0.2, 1 << 20, 0.1, 0));  // times not increasing
  CHECK_FALSE(link.AddProbe(65536, 0, 1 << 20, 0.1, 0));    // no time at all
  CHECK(link.Current().bandwidth_bytes_per_second == 0);
  CHECK(link.NeedsProbe(0, 120));
}

TEST_CASE("link_passive_transfers_take_the_latency_off", "[forecast]") {
  // Latency known from small calls (1 ms); a 10 MB call in 101 ms means
  // 100 MB/s, not 99.
  LinkModel link;
  for (int i = 0; i < 5; ++i) link.AddTransfer(100, 0.001, i);
  CHECK(link.Current().latency_seconds == Approx(0.001));
  CHECK(link.NeedsProbe(5, 120));  // small calls say nothing about bandwidth
  link.AddTransfer(10'000'000, 0.101, 6);
  CHECK(link.Current().bandwidth_bytes_per_second == Approx(1e8));
  CHECK_FALSE(link.NeedsProbe(6, 120));
  // A latency forecast larger than half a transfer is not trusted whole.
  LinkModel stale;
  stale.AddTransfer(100, 1.0, 0);
  stale.AddTransfer(1'000'000, 0.5, 1);
  CHECK(stale.Current().bandwidth_bytes_per_second == Approx(4e6));
}

TEST_CASE("link_lone_outlier_is_counted_not_folded_in", "[forecast]") {
  // A steady 1 ms / 100 MB/s link; one forged report of 99,000 s.
  LinkModel link;
  for (int i = 0; i < 10; ++i) REQUIRE(link.AddProbe(1000, 0.00101, 1000000, 0.01099, i));
  const auto before = link.Current();
  REQUIRE(link.AddProbe(1000, 99000, 1000000, 99120, 11));
  link.AddTransfer(10'000'000, 1e6, 12);
  const auto after = link.Current();
  CHECK(after.latency_seconds == Approx(before.latency_seconds));
  CHECK(after.bandwidth_bytes_per_second == Approx(before.bandwidth_bytes_per_second));
  CHECK(after.rejected == 3);
}

TEST_CASE("link_outliers_repeated_on_one_side_are_a_real_change", "[forecast]") {
  LinkModel link;
  for (int i = 0; i < 10; ++i) link.AddProbe(1000, 0.00101, 1000000, 0.01099, i);
  // The link became 100 times slower and stays so: taken on the third.
  for (int i = 0; i < 12; ++i) link.AddProbe(1000, 0.101, 1000000, 1.099, 20 + i);
  CHECK(link.Current().bandwidth_bytes_per_second == Approx(1e6).epsilon(0.05));
  CHECK(link.Current().rejected == 4);  // two of latency, two of bandwidth
}
