#include "server/settings.h"

#include <toml++/toml.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iterator>
#include <set>
#include <variant>

#include "daemon/common_settings.h"
#include "protocol/default_ports.h"
#include "protocol/install_paths.h"
#include "server/fetch_policy.h"

#ifndef NINF_VERSION
#define NINF_VERSION "unknown"
#endif

namespace ninf::server {
namespace {

using daemon::Reload;
using daemon::SettingKind;

constexpr int64_t kMaxInt = int64_t{1} << 62;

const SettingSpec kTable[] = {
    daemon::PortRow<Settings>(kNinfdPortText),
    daemon::ListenRow<Settings>(),
    {"unix_socket", SettingKind::kString, "auto", 0, 0,
     "Unix-domain socket for clients on this host (arrays through shared memory, not TCP): "
     "a path, \"auto\" (/tmp/ninfd-PORT.sock if it can be made), or \"\" for none",
     &Settings::unix_socket},
    {"registry", SettingKind::kPathList, "stdlib", 0, 64,
     "folders of NAME.interface + NAME executables, served together; a later folder's "
     "function replaces an earlier one of the same name (logged). \"stdlib\" is the "
     "standard library. Repeat the flag, separate with ':' in NINF_REGISTRY, or give a "
     "TOML array",
     &Settings::registry},
    {"slots", SettingKind::kInteger, "0", 0, 4096,
     "calls that run at once (0: one per core); later calls wait in the queue", &Settings::slots},
    {"thread_budget", SettingKind::kString, "adaptive", 0, 0,
     "threads a call gets: \"adaptive\" (the free cores, shared with the recent demand: "
     "a lone call gets every core, concurrent calls split them), \"split\" (cores / slots "
     "each) or \"fixed\" (threads_per_job each, even if that oversubscribes the cores)",
     &Settings::thread_budget},
    {"threads_per_job", SettingKind::kInteger, "0", 0, 4096,
     "threads of every call under thread_budget = \"fixed\" (0: cores / slots)",
     &Settings::threads_per_job},
    {"demand_window_ms", SettingKind::kInteger, "2000", 0, 3600 * 1000,
     "under thread_budget = \"adaptive\": how long a peak of concurrent calls still counts "
     "(a closed-loop client is between two calls for a moment only)",
     &Settings::demand_window_ms},
    {"queue_order", SettingKind::kString, "fcfs", 0, 0,
     "which waiting call starts next: \"fcfs\" (arrival order) or \"sjf\" (smallest "
     "arrival + predicted run time: shortest first, and a call is overtaken only by calls "
     "that arrived within sjf_aging x its own predicted run time)",
     &Settings::queue_order},
    {"sjf_aging", SettingKind::kDecimal, "8", 100, 1000 * 1000,
     "under queue_order = \"sjf\": a call is overtaken only by calls that arrive within "
     "sjf_aging x its predicted run time after it (larger: shorter calls first for longer, "
     "longer waits for large calls)",
     &Settings::sjf_aging},
    {"queue_limit", SettingKind::kInteger, "1024", 0, 1 << 20,
     "calls that may wait for a slot; beyond that a call is refused", &Settings::queue_limit},
    {"admission", SettingKind::kString, "arrival", 0, 0,
     "when a call takes its slot: \"arrival\" (its executable reads the arguments first, "
     "holding no slot or core, then the call waits for a slot with them in memory: slow "
     "links overlap each other and the computations) or \"start\" (a slot first, held while "
     "the arguments arrive)",
     &Settings::admission, Reload::kLive},
    {"arrival_limit", SettingKind::kInteger, "256", 1, 1 << 20,
     "under admission = \"arrival\": calls that may be arriving or hold their arguments "
     "without a slot at once (each has an executable); more wait before their hand-off",
     &Settings::arrival_limit, Reload::kLive},
    {"arrival_bytes", SettingKind::kBytes, "0", 0, kMaxInt,
     "under admission = \"arrival\": argument bytes those calls may hold at once (0: a "
     "quarter of the machine's memory); a call alone always may",
     &Settings::arrival_bytes, Reload::kLive},
    {"client_arrival_limit", SettingKind::kInteger, "64", 0, 1 << 20,
     "of those calls, one client's (its user, else its address; 0: arrival_limit)",
     &Settings::client_arrival_limit, Reload::kLive},
    {"client_arrival_bytes", SettingKind::kBytes, "0", 0, kMaxInt,
     "of those bytes, one client's (0: a quarter of arrival_bytes)",
     &Settings::client_arrival_bytes, Reload::kLive},
    {"release_slot", SettingKind::kString, "computed", 0, 0,
     "under admission = \"arrival\": when a call gives its slot and threads back: "
     "\"computed\" (when its routine returns: its result's transfer overlaps the next "
     "call's computation; it counts against the arrival bounds until the result is out) or "
     "\"result\" (when the result is out)",
     &Settings::release_slot, Reload::kLive},
    {"keep_handle_slots", SettingKind::kBool, "true", 0, 0,
     "a function handle keeps its slot between its calls while no other call asks for one, "
     "so that its next call starts without asking ninfd (protocol/slot_lease.h); any other "
     "call, a reload or the shutdown takes it back",
     &Settings::keep_handle_slots, Reload::kLive},
    {"max_call_bytes", SettingKind::kBytes, "8G", 0, kMaxInt,
     "largest array data of one call, e.g. 512M or 8G (0: no limit)", &Settings::max_call_bytes,
     Reload::kLive},
    {"max_connections", SettingKind::kInteger, "1024", 1, 1 << 20,
     "open client connections, running calls included", &Settings::max_connections},
    daemon::MaxConnectionsPerClientRow<Settings>(),
    {"idle_timeout_seconds", SettingKind::kInteger, "60", 1, 86400,
     "close a connection that sends nothing for this long before its call",
     &Settings::idle_timeout_seconds},
    daemon::RequestTimeoutRow<Settings>(),
    {"transfer_timeout_seconds", SettingKind::kInteger, "60", 1, 86400,
     "kill a call whose arguments or result make no progress on the wire for this long",
     &Settings::transfer_timeout_seconds, Reload::kLive},
    {"liveness_seconds", SettingKind::kInteger, "5", 1, 3600,
     "heartbeat period of every call (a client asking for a shorter one gets it); a client "
     "gone while its call waits or computes is noticed within about this long",
     &Settings::liveness_seconds, Reload::kLive},
    {"call_wall_seconds", SettingKind::kInteger, "0", 0, kMaxInt,
     "wall-clock budget of one call, from its hand-off to its result; over it the executable "
     "is killed and the client told (0: none; [limits.NAME] in the config file overrides it)",
     &Settings::call_wall_seconds, Reload::kLive},
    {"call_cpu_seconds", SettingKind::kInteger, "0", 0, kMaxInt,
     "CPU-time budget of one call, all its threads together (0: none; [limits.NAME] overrides "
     "it)",
     &Settings::call_cpu_seconds, Reload::kLive},
    {"handle_idle_seconds", SettingKind::kInteger, "600", 1, 31536000,
     "stop a function handle's executable idle this long; the handle's next call starts a new "
     "one",
     &Settings::handle_idle_seconds, Reload::kLive},
    {"max_idle_handles", SettingKind::kInteger, "64", 0, 1 << 20,
     "idle function-handle executables kept; the longest idle ones beyond it are stopped",
     &Settings::max_idle_handles, Reload::kLive},
    {"idle_handle_memory", SettingKind::kBytes, "4G", 0, kMaxInt,
     "resident memory all idle function-handle executables may hold together; the longest "
     "idle ones beyond it are stopped",
     &Settings::idle_handle_memory, Reload::kLive},
    {"grace_seconds", SettingKind::kInteger, "10", 0, 3600,
     "on SIGTERM, how long running calls may take before they are killed", &Settings::grace_seconds,
     Reload::kLive},
    {"store_bytes", SettingKind::kBytes, "1G", 0, kMaxInt,
     "memory for kept data: results of two-phase calls until they are collected, arrays of "
     "transaction blocks until a later call reads them (0: keep nothing)",
     &Settings::store_bytes},
    {"store_entries_per_owner", SettingKind::kInteger, "1024", 1, kMaxInt,
     "entries (two-phase results, block arrays) one user may keep at once; a daemon without "
     "keys or users has one owner ([users.NAME] store_entries overrides it)",
     &Settings::store_entries_per_owner, Reload::kLive},
    {"store_bytes_per_owner", SettingKind::kBytes, "0", 0, kMaxInt,
     "bytes of kept data one user may hold at once (0: no cap of its own, store_bytes holds; "
     "[users.NAME] store_bytes overrides it)",
     &Settings::store_bytes_per_owner, Reload::kLive},
    {"user_max_slots", SettingKind::kInteger, "0", 0, 4096,
     "slots the calls of one user may hold at once, even on an idle server (0: no cap; "
     "[users.NAME] max_slots overrides it)",
     &Settings::user_max_slots, Reload::kLive},
    {"user_max_queued", SettingKind::kInteger, "0", 0, 1 << 20,
     "calls of one user that may wait for a slot; beyond that its calls are refused with "
     "NINF_ERR_LIMIT (0: only queue_limit; [users.NAME] max_queued overrides it)",
     &Settings::user_max_queued, Reload::kLive},
    {"user_max_two_phase", SettingKind::kInteger, "0", 0, kMaxInt,
     "two-phase results of one user kept (running or not yet collected) at once (0: only "
     "store_entries_per_owner; [users.NAME] max_two_phase overrides it)",
     &Settings::user_max_two_phase, Reload::kLive},
    {"user_metric_labels", SettingKind::kInteger, "32", 1, 4096,
     "users with a label of their own in the metrics' per-user series; later users share "
     "the label \"other\"",
     &Settings::user_metric_labels},
    {"result_keep_seconds", SettingKind::kInteger, "3600", 1, 30 * 86400,
     "how long a two-phase call's result waits to be collected", &Settings::result_keep_seconds,
     Reload::kLive},
    {"data_keep_seconds", SettingKind::kInteger, "600", 1, 86400,
     "how long an array a transaction block keeps here waits for its reader; a client that "
     "goes away without ending its block loses it after this",
     &Settings::data_keep_seconds, Reload::kLive},
    {"warm_executables", SettingKind::kInteger, "1", 0, 64,
     "idle executables kept started per function after its first call, so calls skip the "
     "executable's start-up (0: start one per call)",
     &Settings::warm_executables},
    {"warm_at_start", SettingKind::kString, "", 0, 0,
     "functions whose executables (warm_executables of each) ninfd starts when it starts and "
     "after a registry reload, so that even their first call finds one waiting: names "
     "separated by commas (\"\": none; a name the registry does not serve stops the start)",
     &Settings::warm_at_start, Reload::kLive},
    {"executable_max_calls", SettingKind::kInteger, "1000", 1, kMaxInt,
     "one-shot calls one executable process serves before it is replaced; between them it "
     "waits in the pool, its arrays cleared (1: a new process for every call; [limits.NAME] "
     "overrides it, and a routine declared Reuse \"no\" is never reused)",
     &Settings::executable_max_calls, Reload::kLive},
    {"executable_max_seconds", SettingKind::kInteger, "3600", 0, kMaxInt,
     "a reused executable process is replaced once it has lived this long (0: never)",
     &Settings::executable_max_seconds, Reload::kLive},
    daemon::LogLevelRow<Settings>(),
    daemon::ReadyFileRow<Settings>(),
    {"key_file", SettingKind::kString, "", 0, 0,
     "file of shared keys (one per line, mode 0600) that clients must prove they hold before "
     "any request (docs/security.md); \"\": no authentication",
     &Settings::key_file, Reload::kLive},
    {"insecure", SettingKind::kBool, "false", 0, 0,
     "serve a non-loopback listen address without a key_file: anyone who reaches the port may "
     "run the registry's functions",
     &Settings::insecure},
    {"allow_plaintext", SettingKind::kBool, "false", 0, 0,
     "serve a non-loopback listen address (or relay) with a key_file but without TLS: the "
     "calls' arrays cross the network in clear",
     &Settings::allow_plaintext},
    {"metaserver", SettingKind::kString, "", 0, 0,
     "host:port of a ninf-meta to register with and report load to, so that its clients are "
     "placed here (docs/metaserver.md); \"\": none. Direct clients are served either way",
     &Settings::metaserver},
    {"site", SettingKind::kString, "", 0, 0,
     "the site this server belongs to, as the metaserver shows it (\"\": the host name)",
     &Settings::site},
    {"advertise", SettingKind::kString, "", 0, 0,
     "host:port the metaserver sends clients to (a host alone: with the port ninfd listens "
     "on; \"\": the listen address and port, with 0.0.0.0 the host name); with reverse, the "
     "relay's host:port as clients reach it (\"\": relay)",
     &Settings::advertise},
    {"reverse", SettingKind::kBool, "false", 0, 0,
     "serve from behind a firewall: listen on no TCP port, keep a connection out to the relay "
     "(`relay`) and take clients through it (docs/relay.md)",
     &Settings::reverse},
    {"relay", SettingKind::kString, "", 0, 0,
     "host:port of the ninf-relay a reverse server registers with (authenticated with key_file); "
     "clients then call NAME@host:port",
     &Settings::relay},
    {"relay_name", SettingKind::kString, "", 0, 0,
     "the name a reverse server registers under at the relay (\"\": the host name)",
     &Settings::relay_name},
    {"relay_key_file", SettingKind::kString, "", 0, 0,
     "the key file whose first key a reverse server proves to the relay (\"\": key_file); a key "
     "of the relay's own keeps clients, who hold key_file's, from registering as servers",
     &Settings::relay_key_file},
    {"mpi_ranks", SettingKind::kInteger, "0", 0, 4096,
     "ranks of the MPI job a Backend \"MPI\" function runs as (0: one per core; "
     "[limits.NAME] ranks overrides it; docs/mpi.md)",
     &Settings::mpi_ranks, Reload::kLive},
    {"mpirun", SettingKind::kString, "mpirun", 0, 0,
     "the command that starts MPI jobs (looked up in PATH)", &Settings::mpirun, Reload::kLive},
    {"mpirun_args", SettingKind::kString, "", 0, 0,
     "more words for it, before the executable (e.g. \"--mca btl self,vader\")",
     &Settings::mpirun_args, Reload::kLive},
    {"mpi_oversubscribe", SettingKind::kBool, "false", 0, 0,
     "allow MPI jobs more ranks than cores (passes --oversubscribe); admission still holds "
     "at most every core for one",
     &Settings::mpi_oversubscribe, Reload::kLive},
    {"launcher", SettingKind::kString, "local", 0, 0,
     "how executables are started: \"local\" (ninfd starts them, mpirun for MPI ones) or "
     "\"slurm\" (srun, inside the allocation ninfd runs in; docs/cluster.md); [limits.NAME] "
     "launcher overrides it",
     &Settings::launcher, Reload::kLive},
    {"srun", SettingKind::kString, "srun", 0, 0,
     "the command that starts Slurm steps (looked up in PATH)", &Settings::srun, Reload::kLive},
    {"srun_args", SettingKind::kString, "", 0, 0,
     "more words for it, before the executable (e.g. \"--partition compute\")",
     &Settings::srun_args, Reload::kLive},
    {"launch_address", SettingKind::kString, "", 0, 0,
     "HOST or HOST:PORT of this host where launched executables (mpirun, srun) connect back "
     "over TCP, and then clients are redirected to them: for ranks on other hosts "
     "(docs/cluster.md); \"\": a Unix socket, rank 0 on this host",
     &Settings::launch_address},
    {"fetch_from", SettingKind::kString, "", 0, 0,
     "the ninfds whose kept data this server's calls may read besides its own and what its "
     "metaserver lists, separated by commas: ip:port, or unix:/path for a same-host ninfd's "
     "socket (docs/transactions.md): servers a client calls directly in one transaction block",
     &Settings::fetch_from, Reload::kLive},
    daemon::MetricsRow<Settings>(),
    daemon::TlsCertRow<Settings>(),
    daemon::TlsKeyRow<Settings>(),
    daemon::TlsClientCaRow<Settings>(),
    {"tls_ca", SettingKind::kString, "", 0, 0,
     "PEM trust anchors of the TLS connections ninfd makes itself (to the metaserver; to the "
     "relay, its control connection; its executables' fetches of kept data), where it shows "
     "tls_cert as its client certificate; \"\": those are plaintext",
     &Settings::tls_ca},
};

std::string VersionText() { return std::string("ninfd ") + NINF_VERSION + "\n"; }

}  // namespace

std::span<const SettingSpec> SettingsTable() { return kTable; }

bool AppliesLive(std::string_view key) {
  // "limits" stands for the [limits.NAME] tables, read per call.
  return key == "limits" || key == "users" ||
         daemon::AppliesLiveIn(std::span<const SettingSpec>(kTable), key);
}

std::vector<std::string> ChangedSettings(const Settings &a, const Settings &b) {
  std::vector<std::string> changed =
      daemon::ChangedSettingKeys(std::span<const SettingSpec>(kTable), a, b);
  if (a.function_limits != b.function_limits) changed.emplace_back("limits");
  if (a.users != b.users) changed.emplace_back("users");
  return changed;
}

Settings LiveSettings(const Settings &running, const Settings &fresh) {
  // function_limits and users are no rows: they come from `fresh`, live.
  return daemon::LiveSettingsOf(std::span<const SettingSpec>(kTable), running, fresh);
}

std::vector<std::string> WarmAtStartNames(const Settings &settings) {
  std::vector<std::string> names;
  std::string name;
  auto take = [&] {
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(name);
    name.clear();
  };
  for (char c : settings.warm_at_start) {
    if (c == ',' || c == ' ' || c == '\t')
      take();
    else
      name += c;
  }
  take();
  return names;
}

Status CheckScheduling(const Settings &s) {
  ThreadBudget budget;
  QueueOrder order;
  if (!ParseThreadBudget(s.thread_budget, &budget))
    return Status(NINF_ERR_INVALID_ARGUMENT,
                  "thread_budget = '" + s.thread_budget + "' is none of fixed, split, adaptive");
  if (!ParseQueueOrder(s.queue_order, &order))
    return Status(NINF_ERR_INVALID_ARGUMENT,
                  "queue_order = '" + s.queue_order + "' is neither fcfs nor sjf");
  if (AdmissionOrder admission; !ParseAdmissionOrder(s.admission, &admission))
    return Status(NINF_ERR_INVALID_ARGUMENT,
                  "admission = '" + s.admission + "' is neither arrival nor start");
  if (s.release_slot != "computed" && s.release_slot != "result")
    return Status(NINF_ERR_INVALID_ARGUMENT,
                  "release_slot = '" + s.release_slot + "' is neither computed nor result");
  if (s.threads_per_job > 0 && budget != ThreadBudget::kFixed)
    return Status(NINF_ERR_INVALID_ARGUMENT,
                  "threads_per_job = " + std::to_string(s.threads_per_job) +
                      " applies to thread_budget = \"fixed\" only (thread_budget is \"" +
                      s.thread_budget + "\")");
  if (s.launcher != "local" && s.launcher != "slurm")
    return Status(NINF_ERR_INVALID_ARGUMENT,
                  "launcher = '" + s.launcher + "' is neither local nor slurm");
  std::set<std::string> peers;
  return ParseFetchFrom(s.fetch_from, &peers);
}

SchedulerConfig Settings::Scheduler(int cores) const {
  SchedulerConfig c;
  c.cores = std::max(1, cores);
  c.slots = ResolveSlots(slots, c.cores);
  c.fixed_threads = ResolveThreadsPerJob(threads_per_job, c.cores, c.slots);
  (void)ParseThreadBudget(thread_budget, &c.budget);
  (void)ParseQueueOrder(queue_order, &c.order);
  c.queue_limit = static_cast<std::size_t>(queue_limit);
  c.demand_window_seconds = static_cast<double>(demand_window_ms) / 1000.0;
  c.sjf_aging = static_cast<double>(sjf_aging) / 1000.0;
  return c;
}

Status ParseInvocation(int argc, const char *const *argv, const daemon::EnvLookup &env,
                       Invocation *out) {
  CLI::App app(
      "ninfd: the Ninf server daemon. It serves the functions of its registry folders "
      "and starts one executable per call.\nEvery setting is also read from the "
      "environment variable NINF_<NAME> and from the --config file (TOML); flags "
      "win over the environment, which wins over the file.",
      "ninfd");
  Invocation inv;
  app.add_flag("--status", inv.status, "ask a running ninfd for its statistics and exit");
  app.add_flag("--list", inv.list,
               "print the functions a running ninfd serves, with their signatures, and exit");
  app.add_flag("--openblas-core", inv.openblas_core,
               "print the OpenBLAS kernels this machine's executables get (OPENBLAS_CORETYPE), "
               "and exit");
  app.add_option("--server", inv.status_server,
                 "host:port of the daemon --status and --list ask (default: listen:port)")
      ->type_name("HOST:PORT");
  daemon::CommandLine cl;
  cl.version_text = VersionText();
  cl.default_config_file = InstalledConfigFile("ninfd.toml");
  // The [limits.NAME] and [users.NAME] tables: rows of their own
  // (named_tables.cc), listed after the flags.
  app.footer(NamedTablesHelp());
  auto limits = [&inv](const std::string &path, std::string_view key, const toml::table &table,
                       bool *handled) {
    if (key == "users") {
      *handled = true;
      return ReadUserTables(path, table, &inv.settings.users);
    }
    if (key != "limits") return Status::Ok();
    *handled = true;
    return ReadFunctionTables(path, table, &inv.settings.function_limits);
  };
  NINF_RETURN_IF_ERROR(daemon::ParseInvocationOf(app, kTable, argc, argv, env, limits, &cl, &inv));
  if (!inv.exit_now) NINF_RETURN_IF_ERROR(CheckScheduling(inv.settings));
  *out = std::move(inv);
  return Status::Ok();
}

}  // namespace ninf::server
