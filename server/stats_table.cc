#include "server/stats_table.h"

namespace ninf::server {
namespace {

using daemon::MetricType;
using daemon::StatFormat;
using daemon::StatValue;

// Readers of one member, so that a row names its field.
template <auto M>
StatValue StatOfGauges(const GlobalStatsSource &s) {
  return s.gauges.*M;
}
template <auto M>
StatValue StatOfCounters(const GlobalStatsSource &s) {
  return s.counters.*M;
}
template <auto M>
StatValue StatOfFunction(const FunctionStats &f) {
  return f.*M;
}
template <Histogram FunctionStats::*M>
StatValue StatOfHistogram(const FunctionStats &f) {
  const Histogram &h = f.*M;
  return daemon::HistogramView{Histogram::kBounds, h.counts, h.count, h.sum};
}
template <auto M>
StatValue StatOfUserCalls(const UserStatsSource &u) {
  return u.calls.*M;
}
template <auto M>
StatValue StatOfUserShare(const UserStatsSource &u) {
  return u.gauge.*M;
}

// The mean of the completed calls' receive + compute + send.
StatValue FunctionMeanSeconds(const FunctionStats &f) {
  return f.completed ? f.busy_seconds / static_cast<double>(f.completed) : 0.0;
}

// Calls that ran (rejected and denied ones never did).
StatValue UserCallsRan(const UserStatsSource &u) {
  return u.calls.completed + u.calls.failed + u.calls.cancelled;
}

constexpr auto kStatCounter = MetricType::kCounter;
constexpr auto kStatGauge = MetricType::kGauge;
constexpr auto kStatInteger = StatFormat::kInteger;
constexpr auto kStatMicros = StatFormat::kMicros;
constexpr auto kStatText = StatFormat::kText;

using StatGlobalRow = daemon::StatRowOf<GlobalStatsSource>;

// status line, metric family, its label, type, status format, help, value.
constexpr StatGlobalRow kGlobalStatRows[] = {
    {"version", "ninf_build_info", "version", kStatGauge, kStatText,
     "The ninfd version (always 1).", &StatOfGauges<&Gauges::version>},
    // The target's identity; process_start_time_seconds tells restarts.
    {"pid", nullptr, nullptr, kStatGauge, kStatInteger, nullptr, &StatOfGauges<&Gauges::pid>},
    {"uptime_seconds", "ninf_uptime_seconds", nullptr, kStatGauge, kStatInteger,
     "Seconds since ninfd started.", &StatOfGauges<&Gauges::uptime_seconds>},
    {"cores", "ninf_cores", nullptr, kStatGauge, kStatInteger, "Cores ninfd schedules calls on.",
     &StatOfGauges<&Gauges::cores>},
    {"slots", "ninf_slots", nullptr, kStatGauge, kStatInteger,
     "Job slots: calls that may run at once.", &StatOfGauges<&Gauges::slots>},
    {"threads_per_job", "ninf_threads_per_job", nullptr, kStatGauge, kStatInteger,
     "Threads a lone call is granted.", &StatOfGauges<&Gauges::threads_per_job>},
    {"thread_budget", "ninf_config_info", "thread_budget", kStatGauge, kStatText,
     "Scheduling settings in force as labels (always 1): admission, queue_order, "
     "thread_budget.",
     &StatOfGauges<&Gauges::thread_budget>},
    {"queue_order", "ninf_config_info", "queue_order", kStatGauge, kStatText, nullptr,
     &StatOfGauges<&Gauges::queue_order>},
    {"queue_limit", "ninf_queue_limit", nullptr, kStatGauge, kStatInteger,
     "Calls that may wait for a slot (queue_limit).", &StatOfGauges<&Gauges::queue_limit>},
    {"max_call_bytes", "ninf_max_call_bytes", nullptr, kStatGauge, kStatInteger,
     "Largest call accepted, in bytes (max_call_bytes).", &StatOfGauges<&Gauges::max_call_bytes>},
    {"functions", "ninf_functions", nullptr, kStatGauge, kStatInteger,
     "Functions the registry serves.", &StatOfGauges<&Gauges::functions>},
    {"running", "ninf_slots_busy", nullptr, kStatGauge, kStatInteger, "Calls holding a slot now.",
     &StatOfGauges<&Gauges::running>},
    {"queued", "ninf_queue_length", nullptr, kStatGauge, kStatInteger, "Calls waiting for a slot.",
     &StatOfGauges<&Gauges::queued>},
    {"admission", "ninf_config_info", "admission", kStatGauge, kStatText, nullptr,
     &StatOfGauges<&Gauges::admission>},
    {"arrival_limit", "ninf_arrival_limit", nullptr, kStatGauge, kStatInteger,
     "Calls that may hold room under the arrival bounds.", &StatOfGauges<&Gauges::arrival_limit>},
    {"arrival_bytes", "ninf_arrival_bytes_limit", nullptr, kStatGauge, kStatInteger,
     "Argument bytes that may be charged under the arrival bounds.",
     &StatOfGauges<&Gauges::arrival_bytes_limit>},
    {"arrival_waiting", "ninf_arrival_waiting", nullptr, kStatGauge, kStatInteger,
     "Calls waiting before their hand-off for room under the arrival bounds.",
     &StatOfGauges<&Gauges::arrival_waiting>},
    {"arrival_waiting_bytes", "ninf_arrival_waiting_bytes", nullptr, kStatGauge, kStatInteger,
     "Argument bytes of the calls waiting for room under the arrival bounds.",
     &StatOfGauges<&Gauges::arrival_waiting_bytes>},
    {"arrival_held", "ninf_arrival_calls", nullptr, kStatGauge, kStatInteger,
     "Calls with room under the arrival bounds and no slot yet (admission = arrival).",
     &StatOfGauges<&Gauges::arrival_held>},
    {"arrival_held_bytes", "ninf_arrival_bytes", nullptr, kStatGauge, kStatInteger,
     "Argument bytes charged to those calls.", &StatOfGauges<&Gauges::arrival_held_bytes>},
    {"arriving", "ninf_arguments_arriving", nullptr, kStatGauge, kStatInteger,
     "Executables reading a call's arguments now.", &StatOfGauges<&Gauges::arriving>},
    {"held", "ninf_arguments_held", nullptr, kStatGauge, kStatInteger,
     "Calls whose arguments are in memory, waiting for a slot.", &StatOfGauges<&Gauges::held>},
    {"held_bytes", "ninf_arguments_held_bytes", nullptr, kStatGauge, kStatInteger,
     "The bytes of those arguments.", &StatOfGauges<&Gauges::held_bytes>},
    {"threads_held", "ninf_threads_held", nullptr, kStatGauge, kStatInteger,
     "Threads granted to the running calls.", &StatOfGauges<&Gauges::threads_held>},
    {"brief_running", "ninf_brief_running", nullptr, kStatGauge, kStatInteger,
     "Running calls admitted as brief: a slot and no core of the thread budget.",
     &StatOfGauges<&Gauges::brief_running>},
    {"busy_core_seconds", "ninf_busy_core_seconds_total", nullptr, kStatCounter, kStatMicros,
     "Core-seconds spent in routines (utilization = rate / ninf_cores).",
     &StatOfGauges<&Gauges::busy_core_seconds>},
    {"queue_seconds", "ninf_queue_seconds_total", nullptr, kStatCounter, kStatMicros,
     "Seconds calls waited for a slot, summed.", &StatOfCounters<&Counters::queue_seconds>},
    {"jobs", "ninf_executables", "state=live", kStatGauge, kStatInteger,
     "Executable processes by state.", &StatOfGauges<&Gauges::jobs>},
    {"connections", "ninf_connections", nullptr, kStatGauge, kStatInteger,
     "Open client connections.", &StatOfGauges<&Gauges::connections>},
    {"connections_accepted", "ninf_connections_accepted_total", nullptr, kStatCounter, kStatInteger,
     "Client connections accepted.", &StatOfCounters<&Counters::connections_accepted>},
    {"completed", "ninf_calls_ended_total", "outcome=completed", kStatCounter, kStatInteger,
     "Calls by how they ended.", &StatOfCounters<&Counters::completed>},
    {"failed", "ninf_calls_ended_total", "outcome=failed", kStatCounter, kStatInteger, nullptr,
     &StatOfCounters<&Counters::failed>},
    {"cancelled", "ninf_calls_ended_total", "outcome=cancelled", kStatCounter, kStatInteger,
     nullptr, &StatOfCounters<&Counters::cancelled>},
    {"rejected", "ninf_calls_ended_total", "outcome=rejected", kStatCounter, kStatInteger, nullptr,
     &StatOfCounters<&Counters::rejected>},
    {"protocol_errors", "ninf_protocol_errors_total", nullptr, kStatCounter, kStatInteger,
     "Connections closed for a malformed or unexpected frame.",
     &StatOfCounters<&Counters::protocol_errors>},
    {"auth_failures", "ninf_auth_failures_total", nullptr, kStatCounter, kStatInteger,
     "Connections closed for a missing or wrong proof of a key.",
     &StatOfCounters<&Counters::auth_failures>},
    {"denied", "ninf_calls_denied_total", nullptr, kStatCounter, kStatInteger,
     "Calls refused by an allow list or for a revoked user.", &StatOfCounters<&Counters::denied>},
    {"bytes_in", "ninf_bytes_total", "direction=in", kStatCounter, kStatInteger,
     "Bytes the executables received and sent.", &StatOfCounters<&Counters::bytes_in>},
    {"bytes_out", "ninf_bytes_total", "direction=out", kStatCounter, kStatInteger, nullptr,
     &StatOfCounters<&Counters::bytes_out>},
    {"executables_started", "ninf_executables_started_total", nullptr, kStatCounter, kStatInteger,
     "Executables started, cold or warm.", &StatOfCounters<&Counters::executables_started>},
    {"warm_executables", "ninf_warm_executables", nullptr, kStatGauge, kStatInteger,
     "Executables kept started per function (setting).", &StatOfGauges<&Gauges::warm_executables>},
    {"warm_idle", "ninf_executables", "state=warm_idle", kStatGauge, kStatInteger, nullptr,
     &StatOfGauges<&Gauges::warm_idle>},
    {"warm_hits", "ninf_warm_hits_total", nullptr, kStatCounter, kStatInteger,
     "Calls handed to a waiting executable.", &StatOfCounters<&Counters::warm_hits>},
    {"executables_reused", "ninf_executables_reused_total", nullptr, kStatCounter, kStatInteger,
     "Calls served by a process that had served one before.",
     &StatOfCounters<&Counters::executables_reused>},
    {"warm_misses", "ninf_warm_misses_total", nullptr, kStatCounter, kStatInteger,
     "Calls that had to start their executable.", &StatOfCounters<&Counters::warm_misses>},
    {"persistent_executables", "ninf_executables", "state=persistent", kStatGauge, kStatInteger,
     nullptr, &StatOfGauges<&Gauges::persistent_executables>},
    {"kept_slots", "ninf_kept_slots", nullptr, kStatGauge, kStatInteger,
     "Function handles keeping their slot between calls (keep_handle_slots).",
     &StatOfGauges<&Gauges::kept_slots>},
    {"kept_slot_calls", "ninf_kept_slot_calls_total", nullptr, kStatCounter, kStatInteger,
     "Function handle calls begun on the slot the handle kept, without asking ninfd.",
     &StatOfCounters<&Counters::kept_slot_calls>},
    {"store_entries", "ninf_store_entries", nullptr, kStatGauge, kStatInteger,
     "Entries of kept data.", &StatOfGauges<&Gauges::store_entries>},
    {"store_bytes", "ninf_store_bytes", nullptr, kStatGauge, kStatInteger, "Bytes of kept data.",
     &StatOfGauges<&Gauges::store_bytes>},
    {"store_cap", "ninf_store_cap_bytes", nullptr, kStatGauge, kStatInteger,
     "The store's bound, in bytes.", &StatOfGauges<&Gauges::store_cap>},
    {"store_stored", "ninf_store_stored_total", nullptr, kStatCounter, kStatInteger,
     "Entries of kept data stored.", &StatOfGauges<&Gauges::store_stored>},
    {"store_refused", "ninf_store_refused_total", nullptr, kStatCounter, kStatInteger,
     "Entries refused at the store's bounds.", &StatOfGauges<&Gauges::store_refused>},
    {"store_expired", "ninf_store_expired_total", nullptr, kStatCounter, kStatInteger,
     "Entries dropped at their expiry.", &StatOfGauges<&Gauges::store_expired>},
    {"store_released", "ninf_store_released_total", nullptr, kStatCounter, kStatInteger,
     "Entries released by their owner.", &StatOfGauges<&Gauges::store_released>},
    {"store_served_bytes", "ninf_store_served_bytes_total", nullptr, kStatCounter, kStatInteger,
     "Bytes of kept data sent by COLLECT and FETCH.", &StatOfGauges<&Gauges::store_served_bytes>},
    {"store_descriptors", "ninf_store_descriptors", nullptr, kStatGauge, kStatInteger,
     "Entries of kept data held as a memfd.", &StatOfGauges<&Gauges::store_descriptors>},
    {"load_average_1", "ninf_load_average_1", nullptr, kStatGauge, StatFormat::kHundredths,
     "The host's 1-minute load average.", &StatOfGauges<&Gauges::load_average_1>},
};

constexpr daemon::StatRowOf<FunctionStats> kFunctionStatRows[] = {
    {"calls", nullptr, nullptr, kStatCounter, kStatInteger, nullptr,
     &StatOfFunction<&FunctionStats::calls>},
    {nullptr, "ninf_calls_total", "outcome=completed", kStatCounter, kStatInteger,
     "Calls of each function that completed or failed.",
     &StatOfFunction<&FunctionStats::completed>},
    {"failed", "ninf_calls_total", "outcome=failed", kStatCounter, kStatInteger, nullptr,
     &StatOfFunction<&FunctionStats::failed>},
    {"mean_seconds", nullptr, nullptr, kStatGauge, kStatMicros, nullptr, &FunctionMeanSeconds},
    {"wait_seconds", nullptr, nullptr, kStatCounter, kStatMicros, nullptr,
     &StatOfFunction<&FunctionStats::wait_seconds>},
    {"transfer_seconds", nullptr, nullptr, kStatCounter, kStatMicros, nullptr,
     &StatOfFunction<&FunctionStats::transfer_seconds>},
    {"compute_seconds", nullptr, nullptr, kStatCounter, kStatMicros, nullptr,
     &StatOfFunction<&FunctionStats::compute_seconds>},
    // The same three times call by call, for percentiles.
    {nullptr, "ninf_call_seconds", "phase=wait", MetricType::kHistogram, kStatInteger,
     "Where calls' time went: waiting for a slot, moving arrays, in the routine.",
     &StatOfHistogram<&FunctionStats::wait_histogram>},
    {nullptr, "ninf_call_seconds", "phase=transfer", MetricType::kHistogram, kStatInteger, nullptr,
     &StatOfHistogram<&FunctionStats::transfer_histogram>},
    {nullptr, "ninf_call_seconds", "phase=compute", MetricType::kHistogram, kStatInteger, nullptr,
     &StatOfHistogram<&FunctionStats::compute_histogram>},
    {"peak_rss_bytes", "ninf_executable_peak_rss_bytes", nullptr, kStatGauge, kStatInteger,
     "The largest resident memory one executable of the function reached over one call.",
     &StatOfFunction<&FunctionStats::peak_rss_bytes>},
};

constexpr daemon::StatRowOf<UserStatsSource> kUserStatRows[] = {
    {"calls", nullptr, nullptr, kStatCounter, kStatInteger, nullptr, &UserCallsRan},
    {"completed", "ninf_user_calls_total", "outcome=completed", kStatCounter, kStatInteger,
     "Calls of each user by how they ended.", &StatOfUserCalls<&UserCallStats::completed>},
    {"failed", "ninf_user_calls_total", "outcome=failed", kStatCounter, kStatInteger, nullptr,
     &StatOfUserCalls<&UserCallStats::failed>},
    {nullptr, "ninf_user_calls_total", "outcome=cancelled", kStatCounter, kStatInteger, nullptr,
     &StatOfUserCalls<&UserCallStats::cancelled>},
    {"rejected", "ninf_user_calls_total", "outcome=rejected", kStatCounter, kStatInteger, nullptr,
     &StatOfUserCalls<&UserCallStats::rejected>},
    {"denied", "ninf_user_calls_total", "outcome=denied", kStatCounter, kStatInteger, nullptr,
     &StatOfUserCalls<&UserCallStats::denied>},
    {"running", "ninf_user_slots_busy", nullptr, kStatGauge, kStatInteger,
     "Slots each user's calls hold now.", &StatOfUserShare<&UserGauge::running>},
    {"queued", "ninf_user_queue_length", nullptr, kStatGauge, kStatInteger,
     "Calls of each user waiting for a slot.", &StatOfUserShare<&UserGauge::queued>},
    {"store_bytes", "ninf_user_store_bytes", nullptr, kStatGauge, kStatInteger,
     "Bytes of kept data each user holds.", &StatOfUserShare<&UserGauge::store_bytes>},
};

}  // namespace

std::span<const daemon::StatRowOf<GlobalStatsSource>> GlobalStatRows() { return kGlobalStatRows; }

std::span<const daemon::StatRowOf<FunctionStats>> FunctionStatRows() { return kFunctionStatRows; }

std::span<const daemon::StatRowOf<UserStatsSource>> UserStatRows() { return kUserStatRows; }

std::vector<daemon::FamilyDoc> StatFamilies() {
  std::vector<daemon::FamilyDoc> out;
  daemon::DescribeFamilies(&out, GlobalStatRows(), nullptr);
  daemon::DescribeFamilies(&out, FunctionStatRows(), "function");
  daemon::DescribeFamilies(&out, UserStatRows(), "user");
  return out;
}

}  // namespace ninf::server
