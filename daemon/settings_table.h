// The machinery behind a daemon's settings table, shared by ninfd
// (settings.h) and ninf-meta (metaserver/meta_settings.h): one table per
// daemon drives its command-line flags, its environment variables (the
// daemon's own prefix: NINF_<NAME>, NINF_META_<NAME>) and its TOML config
// file.
//
// Precedence, highest first: flag > environment > config file > default.
// Every value, whatever its source, goes through the same parser and bounds
// check, so an error message names the source that supplied the bad value.
#pragma once

#include <toml++/toml.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "protocol/status.h"

namespace ninf::daemon {

enum class SettingKind {
  kInteger,  // decimal integer
  kBytes,    // integer with an optional K/M/G/T suffix (powers of 1024)
  kString,
  kLogLevel,  // one of the spdlog level names
  kBool,      // true/false (also 1/0, yes/no); as a flag, --name alone means true
  kDecimal,   // a number with an optional fraction, stored in thousandths ("2.5" -> 2500)
  // Paths, stored joined by ':' (as in PATH): the flag may be repeated
  // (--registry A --registry B), the variable separates them with ':'
  // (NINF_REGISTRY=A:B), the file gives a string or an array of strings.
  // `max` bounds how many; an empty entry ("A::B") is refused.
  kPathList,
};

// When a changed value takes effect on SIGHUP (Redis's IMMUTABLE_CONFIG is
// the model): at once, because the daemon reads it per call, per process or
// per check; or only when the daemon restarts (sockets, tables and pools
// built from it at start), in which case the reload names it and keeps the
// running value.
enum class Reload { kRestart, kLive };

// One row of a daemon's table; S is the daemon's settings struct.
template <class S>
struct SettingSpecOf {
  const char *name;  // TOML key; flag is --name with '-' for '_'
  SettingKind kind;
  const char *default_value;  // shown in --help; the struct's defaults match
  int64_t min;                // integer kinds only (kDecimal: in thousandths)
  int64_t max;                // integer kinds; kPathList: the most entries
  const char *help;
  std::variant<int64_t S::*, std::string S::*, bool S::*> field;
  Reload reload = Reload::kRestart;
};

using SettingValue = std::variant<int64_t, std::string, bool>;

// The entries of a kPathList value ("" has none).
std::vector<std::string> SplitPathList(std::string_view joined);

// Parses `raw` as a value of `kind` and checks it against [min, max].
// Errors: NINF_ERR_INVALID_ARGUMENT naming `source` ("--port", "NINF_PORT",
// "ninfd.toml") and the setting.
Status ParseSettingValue(SettingKind kind, const char *name, int64_t min, int64_t max,
                         const std::string &raw, const std::string &source, SettingValue *out);

// "threads_per_job" -> "NINF_THREADS_PER_JOB"; with `prefix` "NINF_META_",
// "NINF_META_THREADS_PER_JOB". The prefix is the daemon's (CommandLine::
// env_prefix): each daemon reads variables of its own, so that one shell or
// one systemd EnvironmentFile can hold ninfd's and ninf-meta's settings.
std::string SettingEnvName(const char *name, std::string_view prefix = "NINF_");
// "threads_per_job" -> "--threads-per-job".
std::string SettingFlagName(const char *name);

// Parses `raw` into the field of `spec` in *out.
template <class S>
Status ApplySettingOf(const SettingSpecOf<S> &spec, const std::string &raw,
                      const std::string &source, S *out) {
  SettingValue value;
  NINF_RETURN_IF_ERROR(
      ParseSettingValue(spec.kind, spec.name, spec.min, spec.max, raw, source, &value));
  if (auto *f = std::get_if<int64_t S::*>(&spec.field)) out->*(*f) = std::get<int64_t>(value);
  if (auto *f = std::get_if<std::string S::*>(&spec.field))
    out->*(*f) = std::get<std::string>(value);
  if (auto *f = std::get_if<bool S::*>(&spec.field)) out->*(*f) = std::get<bool>(value);
  return Status::Ok();
}

// The keys of `table` whose values differ between `a` and `b` (SIGHUP).
template <class S>
std::vector<std::string> ChangedSettingKeys(std::span<const SettingSpecOf<S>> table, const S &a,
                                            const S &b) {
  std::vector<std::string> changed;
  for (const SettingSpecOf<S> &spec : table)
    if (!std::visit([&](auto field) { return a.*field == b.*field; }, spec.field))
      changed.emplace_back(spec.name);
  return changed;
}

// Whether the row named `key` applies live; false for a name not in `table`.
template <class S>
bool AppliesLiveIn(std::span<const SettingSpecOf<S>> table, std::string_view key) {
  for (const SettingSpecOf<S> &spec : table)
    if (key == spec.name) return spec.reload == Reload::kLive;
  return false;
}

// `fresh` with every row that needs a restart set back to its value in
// `running`: what a reload applies.
template <class S>
S LiveSettingsOf(std::span<const SettingSpecOf<S>> table, const S &running, const S &fresh) {
  S out = fresh;
  for (const SettingSpecOf<S> &spec : table)
    if (spec.reload == Reload::kRestart)
      std::visit([&](auto field) { out.*field = running.*field; }, spec.field);
  return out;
}

// Logs a reload: event=settings_reloaded with the keys applied ("-" for
// none), and event=settings_need_restart with the changed keys that keep
// their running values until `daemon` restarts.
void LogReload(std::string_view daemon, const std::vector<std::string> &applied,
               const std::vector<std::string> &restart);

// The keys a reload changed, split by the reload column.
struct ReloadKeys {
  std::vector<std::string> applied;  // in effect at once
  std::vector<std::string> restart;  // keep their running values until a restart
};

// Splits `changed` into the keys that apply live and the others.
ReloadKeys SplitReloadKeys(const std::vector<std::string> &changed,
                           const std::function<bool(std::string_view key)> &applies_live);

// The end of every daemon's reload: the log level of the settings now
// running takes effect, and the keys are logged (LogReload).
void FinishReload(std::string_view daemon, const std::string &log_level, const ReloadKeys &keys);

// Logs a reload whose settings could not be read again (event=reload_failed
// settings=config): nothing changes.
void LogRereadFailed(const Status &st);

// SIGHUP for a daemon whose settings are all rows of `table` (ninf-meta,
// ninf-relay): reads them again with `reread` (a failure is logged and
// changes nothing: false); the rows marked live take their new values in
// *running, the others keep theirs; `apply`, when set, then does what the
// daemon itself reloads, given the settings before; last FinishReload.
template <class S>
bool ReloadTableSettings(
    std::string_view daemon, std::span<const SettingSpecOf<S>> table,
    const std::function<Status(S *)> &reread, S *running,
    const std::type_identity_t<std::function<void(const S &previous)>> &apply = {}) {
  S fresh;
  if (Status st = reread(&fresh); !st.ok()) {
    LogRereadFailed(st);
    return false;
  }
  const ReloadKeys keys =
      SplitReloadKeys(ChangedSettingKeys(table, *running, fresh),
                      [table](std::string_view key) { return AppliesLiveIn(table, key); });
  const S previous = *running;
  *running = LiveSettingsOf(table, previous, fresh);
  if (apply) apply(previous);
  FinishReload(daemon, running->log_level, keys);
  return true;
}

// Looks up an environment variable; returns null when it is not set.
using EnvLookup = std::function<const char *(const char *name)>;

// A config file's sub-table the table itself does not cover (ninfd's
// [limits.NAME]): called with the key and the table; not set, such a table
// is an unknown key.
using ExtraTableFn = std::function<Status(const std::string &path, std::string_view key,
                                          const toml::table &table, bool *handled)>;

// Another program's variable for a setting this daemon has too, beside the
// daemon's own: ninfd's and the client's NINF_KEY_FILE beside ninf-meta's
// NINF_META_KEY_FILE. The daemon never reads it (one shell or one systemd
// EnvironmentFile may hold ninfd's, ninf-meta's and a client's settings),
// and one set while neither the daemon's own variable nor its flag (for
// the config file: --config) gives the value gets a warning at start
// (ForeignVariableWarning): silently ignoring a key file meant for the
// daemon would leave it keyless, and refusing to start would break the
// shared shell. Each daemon's table of them (ninf-meta:
// MetaForeignVariables()) also fills the end of its --help, which
// scripts/check_settings_docs.py checks the docs against.
struct ForeignVariable {
  const char *name;   // "NINF_KEY_FILE"
  const char *whose;  // "ninfd's and the client's": who reads `name`
  const char *ours;   // "NINF_META_KEY_FILE": the daemon's own, for the same setting
};

// "NINF_KEY_FILE is ninfd's and the client's variable and is not read by
// ninf-meta, which reads NINF_META_KEY_FILE" (`daemon` "ninf-meta").
std::string ForeignVariableWarning(const ForeignVariable &variable, std::string_view daemon);

// What a table-driven command line gives back besides the settings.
struct CommandLine {
  std::string version_text;  // set by the caller: what --version prints
  // Set by the caller: the prefix of its environment variables (every
  // row's, and <prefix>CONFIG for the file): "NINF_" for ninfd,
  // "NINF_META_" for ninf-meta.
  std::string env_prefix = "NINF_";
  // Set by the caller: other programs' variables it does not read, each
  // naming its own (a variable of a row, or <env_prefix>CONFIG; another is
  // an error of the table, NINF_ERR_INTERNAL). Empty for ninfd, which reads
  // NINF_* only and ignores ninf-meta's NINF_META_* without a word: they
  // are not its variables.
  std::span<const ForeignVariable> foreign_variables;
  std::string daemon;       // this daemon's name, for --help and the warnings ("ninf-meta")
  std::string config_file;  // --config or <env_prefix>CONFIG, "" if none
  // Set by the caller: read when neither --config nor <env_prefix>CONFIG names a
  // file and this one exists (an installed daemon's /etc/ninf/NAME.toml).
  std::string default_config_file;
  bool exit_now = false;  // --help or --version: print `output` and exit 0
  std::string output;
  // Filled: the foreign variables that are set while the daemon's own
  // variable and flag are not (the config file's first, then in the order
  // of the settings table). The caller warns of each
  // (ForeignVariableWarning) once, at start.
  std::vector<ForeignVariable> ignored_variables;
};

namespace settings_detail {

struct Row {
  const char *name;
  SettingKind kind;
  const char *default_value;
  const char *help;
  Reload reload;
};

// The non-template part of ParseCommandLine: adds the table's flags and
// --config to `app`, parses argv, reads the config file and returns, per
// row, the winning raw value and its source.
Status Resolve(CLI::App &app, std::span<const Row> rows, int argc, const char *const *argv,
               const EnvLookup &env, const ExtraTableFn &extra, CommandLine *cl,
               std::vector<std::pair<std::string, std::string>> *values);

}  // namespace settings_detail

// Adds the table's flags (and --config, --version) to `app`, which may hold flags of
// the daemon's own (--status, --version), parses argv, and fills *out from
// flags, environment, config file and defaults, in that order of
// precedence. Errors (NINF_ERR_INVALID_ARGUMENT) carry a message fit for
// the user: unknown flag, unknown config key, unreadable file, bad value.
template <class S>
Status ParseCommandLine(CLI::App &app, std::span<const SettingSpecOf<S>> table, int argc,
                        const char *const *argv, const EnvLookup &env, const ExtraTableFn &extra,
                        CommandLine *cl, S *out) {
  std::vector<settings_detail::Row> rows;
  rows.reserve(table.size());
  for (const SettingSpecOf<S> &spec : table)
    rows.push_back({spec.name, spec.kind, spec.default_value, spec.help, spec.reload});
  std::vector<std::pair<std::string, std::string>> values;  // raw value, source
  NINF_RETURN_IF_ERROR(settings_detail::Resolve(app, rows, argc, argv, env, extra, cl, &values));
  if (cl->exit_now) return Status::Ok();
  for (std::size_t i = 0; i < table.size(); ++i)
    NINF_RETURN_IF_ERROR(ApplySettingOf(table[i], values[i].first, values[i].second, out));
  return Status::Ok();
}

// ParseCommandLine into a daemon's invocation: its settings, and what the
// command line itself says (the config file, --help or --version output and,
// where the invocation keeps them, the foreign variables that are set).
template <class Inv>
Status ParseInvocationOf(CLI::App &app,
                         std::span<const SettingSpecOf<decltype(Inv::settings)>> table, int argc,
                         const char *const *argv, const EnvLookup &env, const ExtraTableFn &extra,
                         CommandLine *cl, Inv *inv) {
  NINF_RETURN_IF_ERROR(ParseCommandLine(app, table, argc, argv, env, extra, cl, &inv->settings));
  inv->config_file = cl->config_file;
  inv->exit_now = cl->exit_now;
  inv->output = cl->output;
  if constexpr (requires { inv->ignored_variables; })
    inv->ignored_variables = std::move(cl->ignored_variables);
  return Status::Ok();
}

}  // namespace ninf::daemon
