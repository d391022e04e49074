// ninfd settings: one table (settings_table.h has the machinery) drives the
// command-line flags, the NINF_<NAME> environment variables and the TOML
// config file. Precedence, highest first: flag > environment > config file
// > default.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "daemon/settings_table.h"
#include "daemon/table_settings.h"
#include "daemon/users.h"
#include "protocol/address.h"
#include "protocol/default_ports.h"
#include "protocol/status.h"
#include "server/admission.h"

namespace ninf::server {

// The user model is the daemon layer's, shared with ninf-meta
// (daemon/users.h); ninfd's code names it as its own.
using daemon::Identify;
using daemon::Identity;
using daemon::kDefaultUser;
using daemon::Knows;
using daemon::LoadPrincipals;
using daemon::MayCall;
using daemon::OwnStatsLabel;
using daemon::Principals;
using daemon::Proved;
using daemon::QuotaOf;
using daemon::RunAs;
using daemon::ShownUser;
using daemon::UserLabel;
using daemon::UserQuota;
using daemon::UserSpec;
using daemon::UserSpecs;
using daemon::ValidAllowEntry;
using daemon::ValidUserName;

// What one call of a function may use: its [limits.NAME] table's keys, each
// one it leaves out inherited from the server's setting (FunctionKeys()).
// When a call runs out of wall-clock time ninfd kills its executable; CPU
// time is enforced by the executable's own RLIMIT_CPU (the kernel sends
// SIGXCPU). Either way the client is told which limit ended its call.
struct FunctionLimits {
  int64_t wall_seconds = 0;  // 0: no limit
  int64_t cpu_seconds = 0;   // 0: no limit
  int64_t max_calls = 0;     // one-shot calls per executable process (1: no reuse)
  int64_t ranks = 0;         // Backend "MPI": the job's ranks (0: one per core; launcher.h)
  std::string launcher{};    // "local" or "slurm"
  // Who may call it (users.h MayCall): user names and "group:NAME"; empty:
  // every user.
  std::vector<std::string> allow{};
  bool operator==(const FunctionLimits &) const = default;
};

struct Settings {
  int64_t port = kNinfdPort;  // 0: any free port
  std::string listen = "127.0.0.1";
  std::string unix_socket = "auto";        // same-host path: "auto", a path, or "" for none
  std::string registry = "stdlib";         // folders joined by ':' (registry.h: RegistryFolders)
  int64_t slots = 0;                       // 0: one per core
  std::string thread_budget = "adaptive";  // fixed, split, adaptive (admission.h)
  int64_t threads_per_job = 0;             // `fixed`'s threads per call (0: cores / slots)
  int64_t demand_window_ms = 2000;         // `adaptive`: how long a peak of demand counts
  std::string queue_order = "fcfs";        // fcfs, sjf
  int64_t sjf_aging = 8000;                // sjf: the aging factor, in thousandths
  int64_t queue_limit = 1024;
  std::string admission = "arrival";      // arrival, start (admission.h AdmissionOrder)
  int64_t arrival_limit = 256;            // calls arriving or holding arguments without a slot
  int64_t arrival_bytes = 0;              // their argument bytes (0: a quarter of the memory)
  int64_t client_arrival_limit = 64;      // of them, one client's (0: arrival_limit)
  int64_t client_arrival_bytes = 0;       // one client's bytes (0: arrival_bytes / 4)
  std::string release_slot = "computed";  // computed, result: when an arrived call's slot frees
  bool keep_handle_slots = true;  // a handle keeps its slot between calls while nobody else asks
  int64_t max_call_bytes = int64_t{8} << 30;  // 0: no limit
  int64_t max_connections = 1024;
  int64_t max_connections_per_client = 256;
  int64_t idle_timeout_seconds = 60;
  int64_t request_timeout_seconds = 10;
  int64_t transfer_timeout_seconds = 60;
  int64_t liveness_seconds = 5;
  int64_t call_wall_seconds = 0;  // 0: no limit
  int64_t call_cpu_seconds = 0;   // 0: no limit
  int64_t handle_idle_seconds = 600;
  int64_t max_idle_handles = 64;
  int64_t idle_handle_memory = int64_t{4} << 30;
  int64_t grace_seconds = 10;
  int64_t warm_executables = 1;            // idle started executables per called function
  std::string warm_at_start;               // functions warmed before their first call (commas)
  int64_t executable_max_calls = 1000;     // one-shot calls one process serves (1: no reuse)
  int64_t executable_max_seconds = 3600;   // a reused process retires after this (0: never)
  int64_t store_bytes = int64_t{1} << 30;  // kept data (two-phase results, block arrays)
  int64_t store_entries_per_owner = 1024;  // entries one key may keep at once
  int64_t store_bytes_per_owner = 0;       // bytes one user may keep at once (0: store_bytes)
  int64_t user_max_slots = 0;              // slots one user's calls may hold (0: no cap)
  int64_t user_max_queued = 0;             // calls one user may have waiting (0: no cap)
  int64_t user_max_two_phase = 0;          // uncollected two-phase results per user (0: no cap)
  int64_t user_metric_labels = 32;         // users with a label of their own in the metrics
  int64_t result_keep_seconds = 3600;      // a two-phase result waits this long for COLLECT
  int64_t data_keep_seconds = 600;         // a block's kept array waits this long for its reader
  std::string log_level = "info";
  std::string ready_file;          // "": none
  std::string key_file;            // "": no authentication (loopback only, unless insecure)
  bool insecure = false;           // serve a non-loopback address without a key
  bool allow_plaintext = false;    // serve a non-loopback address with keys but no TLS
  std::string metaserver;          // "host:port" of ninf-meta to register with; "": none
  std::string site;                // this server's site for the metaserver ("": the host name)
  std::string advertise;           // host:port clients reach this server at ("": listen:port)
  bool reverse = false;            // no TCP listener: clients come through `relay`
  std::string relay;               // "host:port" of ninf-relay (reverse)
  std::string relay_name;          // registered name there ("": the host name)
  std::string relay_key_file;      // the key proved to the relay ("": key_file)
  int64_t mpi_ranks = 0;           // Backend "MPI" functions' ranks (0: one per core)
  std::string mpirun = "mpirun";   // the MPI launcher
  std::string mpirun_args;         // more words for it
  bool mpi_oversubscribe = false;  // allow more ranks than cores
  std::string launcher = "local";  // how executables start: local, slurm (launcher.h)
  std::string srun = "srun";       // the Slurm launcher
  std::string srun_args;           // more words for it
  std::string launch_address;      // "HOST[:PORT]": launched executables connect back over TCP
  std::string fetch_from;          // "ip:port,...": more servers data references may name
  std::string metrics;             // "[HOST:]PORT" of the Prometheus endpoint; "": none
  std::string tls_cert;            // PEM files (docs/security.md); "": plaintext TCP
  std::string tls_key;
  std::string tls_client_ca;  // "": no client certificate asked
  // Trust anchors of the TLS connections ninfd itself makes (to ninf-meta,
  // and its executables' kept-data fetches); with it ninfd shows
  // tls_cert/tls_key as its client certificate.
  std::string tls_ca;  // "": those connections are plaintext
  // The config file's [limits.NAME] and [users.NAME] tables, as given (the
  // keys each sets; FunctionKeys() and UserKeys() are their rows). Live: a
  // reload changes limits, adds and revokes users.
  daemon::NamedTables function_limits;
  daemon::NamedTables users;

  // The limits of one call of `function`: its table's keys, the server's
  // settings for the rest.
  FunctionLimits LimitsOf(std::string_view function) const;
  // Every [users.NAME] table, each key it leaves out the server's setting.
  UserSpecs Users() const;
  // The quotas of `user`: its [users.NAME] table's, else the user_* and
  // store_*_per_owner settings.
  UserQuota QuotaOf(std::string_view user) const;
  // The scheduler's configuration on a machine with `cores` cores (the
  // settings were checked by ParseInvocation).
  SchedulerConfig Scheduler(int cores) const;
};

using SettingSpec = daemon::SettingSpecOf<Settings>;
using FunctionKey = daemon::TableKeyOf<Settings, FunctionLimits>;
using UserKey = daemon::TableKeyOf<Settings, UserSpec>;

// The keys of a [limits.NAME] and of a [users.NAME] table, in the order
// --help lists them (server/named_tables.cc).
std::span<const FunctionKey> FunctionKeys();
std::span<const UserKey> UserKeys();

// Reads the config file's [limits] / [users] table into *out
// (NINF_ERR_INVALID_ARGUMENT naming the key).
Status ReadFunctionTables(const std::string &path, const toml::table &limits,
                          daemon::NamedTables *out);
Status ReadUserTables(const std::string &path, const toml::table &users, daemon::NamedTables *out);
// The --help sections of both.
std::string NamedTablesHelp();

// The table, in the order --help and the example config list the keys.
std::span<const SettingSpec> SettingsTable();

// "threads_per_job" -> "NINF_THREADS_PER_JOB".
inline std::string EnvName(const SettingSpec &spec) { return daemon::SettingEnvName(spec.name); }

// "threads_per_job" -> "--threads-per-job".
inline std::string FlagName(const SettingSpec &spec) { return daemon::SettingFlagName(spec.name); }

// Parses `raw` as the value of `spec`, checks its bounds and stores it in
// *out. `source` says where the value came from ("--port", "NINF_PORT",
// "ninfd.toml"), for the error message. Errors: NINF_ERR_INVALID_ARGUMENT.
inline Status ApplySetting(const SettingSpec &spec, const std::string &raw,
                           const std::string &source, Settings *out) {
  return daemon::ApplySettingOf(spec, raw, source, out);
}

// SIGHUP (docs/server.md): the settings that take effect at once when the
// config file or environment changes them, because ninfd reads them for
// each call, each process it starts or each check; the others shape what
// was built at start (listeners, admission, the warm pool) and need a
// restart. "limits" stands for the [limits.NAME] tables, "users" for the
// [users.NAME] tables; both are live.
bool AppliesLive(std::string_view key);

// The keys whose values differ between `a` and `b`, in table order, and
// "limits" / "users" when the [limits.NAME] / [users.NAME] tables differ.
std::vector<std::string> ChangedSettings(const Settings &a, const Settings &b);

// `fresh` with every key that needs a restart put back to `running`'s
// value: what a reload applies.
Settings LiveSettings(const Settings &running, const Settings &fresh);

// What the command line asks ninfd to do.
struct Invocation {
  Settings settings;
  std::string config_file;     // --config or NINF_CONFIG, "" if none
  bool status = false;         // --status: query a running daemon and exit
  bool list = false;           // --list: print a running daemon's functions and exit
  bool openblas_core = false;  // --openblas-core: print the executables' OpenBLAS kernels, exit
  std::string status_server;   // --server host:port for --status, --list ("" = listen:port)
  bool exit_now = false;       // --help or --version: print `output`, exit 0
  std::string output;
};

// warm_at_start's function names, in order, without blanks or repeats.
std::vector<std::string> WarmAtStartNames(const Settings &settings);

// The scheduling settings name a budget and an order, and threads_per_job is
// set only for the `fixed` budget. Errors: NINF_ERR_INVALID_ARGUMENT.
Status CheckScheduling(const Settings &settings);

// Builds the settings from argv, the environment and the config file.
// Errors (NINF_ERR_INVALID_ARGUMENT) carry a message fit for the user:
// unknown flag, unknown config key, unreadable file, bad value, bound.
Status ParseInvocation(int argc, const char *const *argv, const daemon::EnvLookup &env,
                       Invocation *out);

}  // namespace ninf::server
