#include "metaserver/forecast.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace ninf::meta {
namespace {

constexpr std::string_view kMethodNames[] = {"last",     "mean",       "median5",
                                             "median21", "smooth0.05", "smooth0.5"};
constexpr double kSmoothing[] = {0.05, 0.5};
// Weight of the newest error in a method's decayed mean squared error.
constexpr double kErrorWeight = 0.2;

// Median of the last `k` values of `history` (all of them if fewer).
double MedianOfLast(const std::deque<double> &history, std::size_t k) {
  k = std::min(k, history.size());
  std::array<double, 21> window{};
  std::copy(history.end() - static_cast<std::ptrdiff_t>(k), history.end(), window.begin());
  auto mid = window.begin() + static_cast<std::ptrdiff_t>(k / 2);
  std::nth_element(window.begin(), mid, window.begin() + static_cast<std::ptrdiff_t>(k));
  if (k % 2 == 1) return *mid;
  const double upper = *mid;
  const double lower = *std::max_element(window.begin(), mid);
  return (lower + upper) / 2;
}

}  // namespace

Forecaster::Forecaster(std::size_t history) : capacity_(std::max<std::size_t>(history, 21)) {}

double Forecaster::MethodForecast(int method) const {
  switch (method) {
    case 0:
      return history_.back();
    case 1: {
      double sum = 0;
      for (double v : history_) sum += v;
      return sum / static_cast<double>(history_.size());
    }
    case 2:
      return MedianOfLast(history_, 5);
    case 3:
      return MedianOfLast(history_, 21);
    case 4:
      return smooth_[0];
    default:
      return smooth_[1];
  }
}

void Forecaster::Add(double value) {
  if (!std::isfinite(value)) return;
  if (samples_ > 0) {
    for (int m = 0; m < kMethods; ++m) {
      const double err = value - MethodForecast(m);
      mse_[m] = scored_ ? (1 - kErrorWeight) * mse_[m] + kErrorWeight * err * err : err * err;
    }
    scored_ = true;
  }
  history_.push_back(value);
  if (history_.size() > capacity_) history_.pop_front();
  for (int i = 0; i < 2; ++i)
    smooth_[i] = samples_ == 0 ? value : smooth_[i] + kSmoothing[i] * (value - smooth_[i]);
  ++samples_;
}

Forecaster::Forecast Forecaster::Predict() const {
  Forecast f;
  if (samples_ == 0) return f;
  f.valid = true;
  int best = 0;  // with one sample every method says the same: "last"
  if (scored_)
    for (int m = 1; m < kMethods; ++m)
      if (mse_[m] < mse_[best]) best = m;
  f.value = MethodForecast(best);
  f.error = scored_ ? std::sqrt(mse_[best]) : 0;
  f.method = kMethodNames[best];
  return f;
}

bool LinkModel::AddProbe(uint64_t small_bytes, double small_seconds, uint64_t large_bytes,
                         double large_seconds, double now) {
  if (!(large_bytes > small_bytes) || !(small_seconds > 0) || !(large_seconds > small_seconds) ||
      !std::isfinite(large_seconds))
    return false;
  // t = L + bytes / B through both points.
  const double bandwidth =
      static_cast<double>(large_bytes - small_bytes) / (large_seconds - small_seconds);
  const double latency =
      std::max(0.0, small_seconds - static_cast<double>(small_bytes) / bandwidth);
  AddLatency(latency, now);
  AddBandwidth(bandwidth, now);
  return true;
}

bool LinkModel::Admit(const Forecaster &series, double value, int &streak) {
  if (!std::isfinite(value)) return false;
  const Forecaster::Forecast f = series.Predict();
  if (series.samples() < kOutlierMinSamples || !f.valid) return true;
  const double band = kOutlierBand * std::max(f.error, 0.1 * std::fabs(f.value));
  const double off = value - f.value;
  if (std::fabs(off) <= band) {
    streak = 0;
    return true;
  }
  // Consecutive outliers on the same side are a change of the link.
  const int side = off > 0 ? 1 : -1;
  streak = streak * side > 0 ? streak + side : side;
  if (streak * side >= kOutlierRepeats) return true;
  ++rejected_;
  return false;
}

void LinkModel::AddLatency(double seconds, double now) {
  if (!Admit(latency_, seconds, latency_streak_)) return;
  latency_.Add(seconds);
  last_sample_at_ = now;
}

void LinkModel::AddTransfer(uint64_t bytes, double seconds, double now) {
  if (!(seconds > 0) || !std::isfinite(seconds)) return;
  const Forecaster::Forecast bw = bandwidth_.Predict();
  if (bytes < kSmallBytes) {
    // Mostly latency; take off what the bytes themselves took, if known.
    const double payload = bw.valid && bw.value > 0 ? static_cast<double>(bytes) / bw.value : 0;
    AddLatency(std::max(0.0, seconds - payload), now);
    return;
  }
  // Mostly bandwidth; take off the latency, but never most of the time (a
  // latency forecast larger than the transfer itself is stale).
  const Forecaster::Forecast lat = latency_.Predict();
  double moving = seconds - (lat.valid ? lat.value : 0);
  if (moving < seconds / 2) moving = seconds / 2;
  AddBandwidth(static_cast<double>(bytes) / moving, now);
}

void LinkModel::AddBandwidth(double bytes_per_second, double now) {
  if (!Admit(bandwidth_, bytes_per_second, bandwidth_streak_)) return;
  bandwidth_.Add(bytes_per_second);
  last_bandwidth_at_ = now;
  last_sample_at_ = now;
}

LinkModel::Estimate LinkModel::Current() const {
  Estimate e;
  const Forecaster::Forecast lat = latency_.Predict(), bw = bandwidth_.Predict();
  if (lat.valid) {
    e.latency_seconds = lat.value;
    e.latency_error = lat.error;
    e.latency_method = lat.method;
  }
  if (bw.valid) {
    e.bandwidth_bytes_per_second = bw.value;
    e.bandwidth_error = bw.error;
    e.bandwidth_method = bw.method;
  }
  e.samples = bandwidth_.samples();
  e.rejected = rejected_;
  e.last_sample_at = last_sample_at_;
  return e;
}

bool LinkModel::NeedsProbe(double now, double max_age_seconds) const {
  return last_bandwidth_at_ < 0 || now - last_bandwidth_at_ > max_age_seconds;
}

bool LinkModel::ShouldAskProbe(double now, double max_age_seconds, double wait_seconds) const {
  if (!NeedsProbe(now, max_age_seconds)) return false;
  // Asked before the last sample: that probe is done, the link aged since.
  const bool pending = probe_asked_at_ >= 0 && probe_asked_at_ >= last_bandwidth_at_ &&
                       now - probe_asked_at_ < wait_seconds;
  return !pending;
}

}  // namespace ninf::meta
