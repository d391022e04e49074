// What ninf-meta believes about a link (client site x server): forecasts
// in the manner of the Network Weather Service. Several simple forecasters
// run on the same history (last value, running mean, sliding medians of 5
// and 21, exponential smoothing with factors 0.05 and 0.5); the answer is
// the one whose recent squared error is lowest, returned with that error,
// so the metaserver knows how much to trust it (`ninf-meta --links`).
//
// A link's samples come from two places: every completed call (bytes moved
// and the time they took, reported by the client: passive) and probes the
// metaserver asks for when a pair has no fresh sample (two sizes, so that
// latency and bandwidth separate: t = L + bytes / B). Pure: time is passed
// in, nothing here reads a clock.
//
// Outliers (issue 28, H6): once a series has kOutlierMinSamples samples, one
// farther from its forecast than kOutlierBand times the forecast's error
// (at least a tenth of the forecast) is counted but not folded in, unless
// it is the kOutlierRepeats-th in a row on the same side: a real change of
// the link is taken within three samples, a lone forged or freak one never.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string_view>

namespace ninf::meta {

// One series of measurements and its forecast.
class Forecaster {
 public:
  struct Forecast {
    double value = 0;
    double error = 0;              // root of the chosen method's recent mean squared error
    std::string_view method = "";  // "last", "mean", "median5", "median21", "smooth0.05", ...
    bool valid = false;            // false until the first sample
  };

  // Keeps the last `history` samples (>= 21).
  explicit Forecaster(std::size_t history = 64);

  void Add(double value);
  Forecast Predict() const;
  std::size_t samples() const { return samples_; }

 private:
  static constexpr int kMethods = 6;
  // Each method's forecast from the history as it stands.
  double MethodForecast(int method) const;

  std::size_t capacity_;
  std::deque<double> history_;
  std::size_t samples_ = 0;
  double smooth_[2] = {0, 0};  // exponential smoothing, factors 0.05 and 0.5
  // Recent mean squared error of each method, exponentially decayed so that
  // a change in the link's behaviour changes the choice within ~10 samples.
  double mse_[kMethods] = {};
  bool scored_ = false;  // mse_ holds at least one error
};

// Latency and bandwidth of one link, from probes and passive samples.
class LinkModel {
 public:
  struct Estimate {
    double latency_seconds = 0;
    double latency_error = 0;
    double bandwidth_bytes_per_second = 0;  // 0: not known yet
    double bandwidth_error = 0;
    double last_sample_at = -1;             // caller's clock, seconds; -1: never
    std::string_view latency_method = "-";  // the forecaster answering each
    std::string_view bandwidth_method = "-";
    std::size_t samples = 0;  // bandwidth samples so far
    uint64_t rejected = 0;    // samples refused as outliers
  };

  // Transfers below this many bytes measure latency; above it, bandwidth.
  static constexpr uint64_t kSmallBytes = 64 * 1024;
  static constexpr std::size_t kOutlierMinSamples = 5;
  static constexpr double kOutlierBand = 8;
  static constexpr int kOutlierRepeats = 3;

  // A probe of two sizes (small < large) at `now`: both parts at once.
  // Returns false (and records nothing) when the sizes or times are
  // unusable (not increasing, not positive); true otherwise, even when a
  // part was refused as an outlier (Estimate::rejected counts those).
  bool AddProbe(uint64_t small_bytes, double small_seconds, uint64_t large_bytes,
                double large_seconds, double now);
  // One real transfer: `bytes` moved one way in `seconds`. Small ones feed
  // the latency; large ones the bandwidth, after the latency forecast is
  // taken off. Non-positive times are ignored.
  void AddTransfer(uint64_t bytes, double seconds, double now);

  Estimate Current() const;
  // True when the link has no bandwidth figure or none newer than max_age.
  bool NeedsProbe(double now, double max_age_seconds) const;
  // A client was asked at `now` to probe this link.
  void ProbeAsked(double now) { probe_asked_at_ = now; }
  // The client asked has probed and come back without a usable sample of
  // this link (unreachable, or times that did not grow with the size): the
  // next placement asks again, without waiting.
  void ProbeFailed() { probe_asked_at_ = -1; }
  // NeedsProbe, and no client was asked to probe it within `wait_seconds`:
  // the clients of one host that start together (256 of them behind one
  // ninf-meta) probe each link once, not each of them every link; the
  // others are placed on what is known meanwhile. A prober that never
  // reports is replaced after `wait_seconds`.
  bool ShouldAskProbe(double now, double max_age_seconds, double wait_seconds) const;

 private:
  // Whether `value` may join `series` (see Outliers above); `streak` is
  // the series' run of outliers, positive above the forecast, negative below.
  bool Admit(const Forecaster &series, double value, int &streak);
  void AddLatency(double seconds, double now);
  void AddBandwidth(double bytes_per_second, double now);

  Forecaster latency_;
  Forecaster bandwidth_;
  int latency_streak_ = 0;
  int bandwidth_streak_ = 0;
  uint64_t rejected_ = 0;
  double last_sample_at_ = -1;
  double last_bandwidth_at_ = -1;
  double probe_asked_at_ = -1;  // -1: never asked
};

}  // namespace ninf::meta
