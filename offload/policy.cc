#include "offload/policy.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ninf::offload {
namespace {

// Samples smaller than these say more about latency than about rates.
constexpr double kMinSampleBytes = 64 * 1024;
constexpr double kMinSampleSeconds = 1e-3;
// The weight of a new sample in the smoothed rates.
constexpr double kSmoothing = 0.3;

double Smooth(double old_value, double sample) {
  return old_value > 0 ? (1 - kSmoothing) * old_value + kSmoothing * sample : sample;
}

// A finite, non-negative number, the whole string ("1e9", "0", "2.5e8").
bool ParseNonNegative(const char *text, double *out) {
  if (!text || !*text) return false;
  errno = 0;
  char *end = nullptr;
  double v = std::strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !std::isfinite(v) || v < 0) return false;
  *out = v;
  return true;
}

std::string Format(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// NINF_OFFLOAD_MIN_FLOPS, else the default floor: a local decision for a
// call under it, or nothing.
std::optional<Decision> UnderFloor(const Config &config, double flops) {
  const std::string text = "flops " + Format(flops);
  if (config.min_flops) {
    if (flops < *config.min_flops)
      return Decision{Where::kLocal,
                      text + " < NINF_OFFLOAD_MIN_FLOPS " + Format(*config.min_flops)};
    return std::nullopt;
  }
  if (flops < kDefaultMinFlops)
    return Decision{Where::kLocal,
                    text + " < " + Format(kDefaultMinFlops) + " (the default floor)"};
  return std::nullopt;
}

long long Min(long long a, long long b) { return a < b ? a : b; }

}  // namespace

double DgesvFlops(long long n, long long nrhs) {
  return static_cast<double>(2 * n * n * n / 3 + 2 * n * n * nrhs);
}
double DgetrfFlops(long long m, long long n) {
  const long long k = Min(m, n);
  return static_cast<double>(2 * m * n * k - (m + n) * k * k + 2 * k * k * k / 3);
}
double DgetrsFlops(long long n, long long nrhs) { return static_cast<double>(2 * n * n * nrhs); }
double DposvFlops(long long n, long long nrhs) {
  return static_cast<double>(n * n * n / 3 + 2 * n * n * nrhs);
}
double DsyevFlops(long long n) { return static_cast<double>(4 * n * n * n / 3); }
double DgemmFlops(long long m, long long n, long long k) {
  return static_cast<double>(2 * m * n * k);
}

Config ParseConfig(const char *(*get)(const char *name)) {
  Config c;
  if (const char *v = get("NINF_OFFLOAD"); v && *v) {
    if (!std::strcmp(v, "0")) {
      c.enabled = false;
    } else if (std::strcmp(v, "1") != 0) {
      c.warnings +=
          std::string("NINF_OFFLOAD='") + v + "' is neither 0 nor 1: offloading stays on\n";
    }
  }
  if (const char *v = get("NINF_OFFLOAD_MIN_FLOPS"); v && *v) {
    double flops = 0;
    if (ParseNonNegative(v, &flops)) {
      c.min_flops = flops;
    } else {
      c.warnings += std::string("NINF_OFFLOAD_MIN_FLOPS='") + v +
                    "' is not a non-negative number (such as 1e9): the measured link decides\n";
    }
  }
  if (const char *v = get("NINF_OFFLOAD_LOG"); v && *v && std::strcmp(v, "0") != 0) {
    // "1" is the switch; anything else names the file.
    c.log = !std::strcmp(v, "1") ? "-" : v;
  }
  if (const char *v = get("NINF_OFFLOAD_WARN"); v && *v) {
    if (!std::strcmp(v, "0")) {
      c.warn_fallback = false;
    } else if (std::strcmp(v, "1") != 0) {
      c.warnings += std::string("NINF_OFFLOAD_WARN='") + v +
                    "' is neither 0 nor 1: the first fallback is reported\n";
    }
  }
  if (const char *v = get("NINF_OFFLOAD_RETRY_SECONDS"); v && *v) {
    double seconds = 0;
    if (ParseNonNegative(v, &seconds)) {
      c.retry_seconds = seconds;
    } else {
      c.warnings += std::string("NINF_OFFLOAD_RETRY_SECONDS='") + v +
                    "' is not a non-negative number of seconds: 10 it is\n";
    }
  }
  return c;
}

std::optional<Decision> DecideBeforeEstimate(const Config &config, const Model &model,
                                             const CallFacts &facts, double now) {
  if (!config.enabled) return Decision{Where::kLocal, "NINF_OFFLOAD=0"};
  if (facts.workspace_query)
    return Decision{Where::kLocal, "workspace query (lwork = -1) answered by the local routine"};
  if (facts.in_transaction)
    return Decision{Where::kLocal,
                    "inside a Ninf transaction block, where a call is only recorded"};
  if (facts.flops >= 0)
    if (auto local = UnderFloor(config, facts.flops)) return local;
  if (now < model.unreachable_until)
    return Decision{Where::kLocal, "server unreachable, next try in " +
                                       Format(model.unreachable_until - now) + " s"};
  return std::nullopt;
}

Decision DecideWithEstimate(const Config &config, const Model &model, const Estimate &estimate,
                            double now) {
  const std::string flops = "flops " + Format(estimate.flops);
  if (auto local = UnderFloor(config, estimate.flops)) return *local;
  if (config.min_flops)
    return {Where::kRemote, flops + " >= NINF_OFFLOAD_MIN_FLOPS " + Format(*config.min_flops)};
  if (model.link_bytes_per_second <= 0)
    return {Where::kRemote, flops + ", link not measured yet: this call measures it"};
  const double local_speed =
      model.local_flops_per_second > 0 ? model.local_flops_per_second : kAssumedLocalFlopsPerSecond;
  const double remote_speed =
      model.remote_flops_per_second > 0 ? model.remote_flops_per_second : local_speed;
  const double local_seconds = estimate.flops / local_speed;
  const double remote_seconds = model.overhead_seconds +
                                estimate.bytes / model.link_bytes_per_second +
                                estimate.flops / remote_speed;
  const std::string times =
      "remote " + Format(remote_seconds) + " s vs local " + Format(local_seconds) + " s";
  if (remote_seconds < local_seconds) return {Where::kRemote, "estimated " + times};
  if (now - model.measured_at >= kReprobeSeconds && remote_seconds < 2 * local_seconds)
    return {Where::kRemote, "estimated " + times + ", from a model " +
                                Format(now - model.measured_at) + " s old: measuring again"};
  return {Where::kLocal, "estimated " + times};
}

bool DgemmLegal(char transa, char transb, int m, int n, int k, int lda, int ldb, int ldc) {
  auto is_flag = [](char c) { return std::strchr("NnTtCc", c) != nullptr && c != '\0'; };
  auto no_trans = [](char c) { return c == 'N' || c == 'n'; };
  auto max1 = [](int v) { return v > 1 ? v : 1; };
  const int nrowa = no_trans(transa) ? m : k;
  const int nrowb = no_trans(transb) ? k : n;
  return is_flag(transa) && is_flag(transb) && m >= 0 && n >= 0 && k >= 0 && lda >= max1(nrowa) &&
         ldb >= max1(nrowb) && ldc >= max1(m);
}

Model NoteRemote(Model model, const RemoteSample &s, double now) {
  if (s.bytes >= kMinSampleBytes && s.transfer_seconds > 0)
    model.link_bytes_per_second = Smooth(model.link_bytes_per_second, s.bytes / s.transfer_seconds);
  if (s.flops > 0 && s.compute_seconds >= kMinSampleSeconds)
    model.remote_flops_per_second =
        Smooth(model.remote_flops_per_second, s.flops / s.compute_seconds);
  // What is neither moving nor computing: connecting, queueing, the
  // executable's hand-over. Never negative (the clocks are two machines').
  const double overhead = s.total_seconds - s.transfer_seconds - s.compute_seconds;
  if (s.total_seconds > 0)
    model.overhead_seconds = Smooth(model.overhead_seconds, overhead > 0 ? overhead : 0);
  model.unreachable_until = 0;
  model.failures = 0;
  model.measured_at = now;
  return model;
}

Model NoteLocal(Model model, double flops, double seconds) {
  if (flops > 0 && seconds >= kMinSampleSeconds)
    model.local_flops_per_second = Smooth(model.local_flops_per_second, flops / seconds);
  return model;
}

Hold HoldOf(ninf_error_t error) {
  switch (error) {
    case NINF_OK:
    case NINF_ERR_INVALID_ARGUMENT:
    case NINF_ERR_ARGUMENT_MISMATCH:
    case NINF_ERR_TOO_LARGE:
    case NINF_ERR_OVERFLOW:
    case NINF_ERR_INVALID_ID:
    case NINF_ERR_CANCELLED:
    case NINF_ERR_NOT_READY:
    case NINF_ERR_COUNT_:
      return Hold::kNone;
    case NINF_ERR_FUNCTION_NOT_FOUND:
    case NINF_ERR_EXECUTABLE:
    case NINF_ERR_SERVER:
    case NINF_ERR_NOT_SUPPORTED:
    case NINF_ERR_INTERNAL:
    case NINF_ERR_EXPIRED:
    case NINF_ERR_DENIED:
    // The server's state, not the call's: its memory, or a limit (CPU
    // time) that a call of the same size would exceed again.
    case NINF_ERR_NO_MEMORY:
    case NINF_ERR_LIMIT:
      return Hold::kRoutine;
    case NINF_ERR_CONNECT:
    case NINF_ERR_PROTOCOL:
    case NINF_ERR_VERSION:
    case NINF_ERR_COMMUNICATION:
    case NINF_ERR_TIMEOUT:
    case NINF_ERR_SHUTTING_DOWN:
    case NINF_ERR_CONFIG:
    case NINF_ERR_AUTH:
      return Hold::kServer;
  }
  return Hold::kServer;  // a code from a newer library: assume the server is the problem
}

Model NoteUnreachable(Model model, const Config &config, double now) {
  // retry_seconds times 1, 2, 4, ... for the 1st, 2nd, 3rd, ... failure in
  // a row, at most kMaxBackoff times.
  const double factor = std::min(static_cast<double>(kMaxBackoff),
                                 std::ldexp(1.0, model.failures < 30 ? model.failures : 30));
  if (model.failures < 30) ++model.failures;
  model.unreachable_until = now + config.retry_seconds * factor;
  return model;
}

}  // namespace ninf::offload
