// One daemon's life, shared by ninfd, ninf-meta and ninf-relay: reading the
// command line, starting the log, descriptors and limits, the loop, the
// signals (SIGTERM/SIGINT stop, a second one stops at once; SIGHUP reloads),
// the start-up error path and the exit status. A daemon's main() parses its
// settings (ReadCommandLine), then hands RunDaemon a way to build its
// Service on the loop. Builds on libuv, spdlog, daemon/descriptors.h and
// daemon/settings_table.h.
#pragma once

#include <uv.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "daemon/descriptors.h"
#include "daemon/log.h"
#include "daemon/settings_table.h"
#include "protocol/status.h"

namespace ninf::daemon {

// What a daemon runs on the shared loop. All calls come on the loop's thread.
class Service {
 public:
  virtual ~Service() = default;
  // Binds and starts serving. An error is why the daemon cannot start: it
  // is logged (event=startup_failed) and the daemon exits with status 1.
  virtual Status Start() = 0;
  // Stops serving; `stopped` runs once nothing is left to do. A second call
  // stops at once.
  virtual void Shutdown(std::function<void()> stopped) = 0;
  // SIGHUP: reads the settings again and applies what applies live.
  virtual void Reload() = 0;
};

struct DaemonSpec {
  int64_t max_connections = 0;  // for the descriptor limit (RaiseFdLimit)
  int fds_per_connection = 1;
};

// Marks inherited descriptors close-on-exec, raises the descriptor limit,
// ignores SIGPIPE (a vanished peer gives EPIPE), builds the Service with
// `make` on a new loop, watches the signals and runs the loop until the
// service has stopped. Returns the process's exit status: 0, or 1 when the
// loop or the service could not start or handles were left open.
int RunDaemon(const DaemonSpec &spec,
              const std::function<std::unique_ptr<Service>(uv_loop_t *)> &make);

// A daemon whose settings are all rows of its table (ninf-meta, ninf-relay)
// as RunDaemon runs it: its Server is built from the loop and the settings
// and has Start() and Shutdown(stopped); SIGHUP is ReloadTableSettings under
// the daemon's name, and the daemon's own part of a reload comes from Hooks.
template <class Server, class S>
class TableDaemon : public Service {
 public:
  struct Hooks {
    // Inside a reload whose settings were read: the server, the settings now
    // running (it may set some back) and those before.
    std::function<void(Server &server, S *running, const S &previous)> apply;
    // After every SIGHUP, whether or not the settings could be read.
    std::function<void(Server &server)> after;
  };

  TableDaemon(uv_loop_t *loop, std::string_view name, std::span<const SettingSpecOf<S>> table,
              const S &settings, std::function<Status(S *)> reread, Hooks hooks)
      : server_(loop, settings),
        name_(name),
        table_(table),
        running_(settings),
        reread_(std::move(reread)),
        hooks_(std::move(hooks)) {}

  Status Start() override { return server_.Start(); }
  void Shutdown(std::function<void()> stopped) override { server_.Shutdown(std::move(stopped)); }
  void Reload() override {
    ReloadTableSettings<S>(name_, table_, reread_, &running_, [this](const S &previous) {
      if (hooks_.apply) hooks_.apply(server_, &running_, previous);
    });
    if (hooks_.after) hooks_.after(server_);
  }

 private:
  Server server_;
  std::string name_;
  std::span<const SettingSpecOf<S>> table_;
  S running_;
  std::function<Status(S *)> reread_;
  Hooks hooks_;
};

// A daemon's parser of its command line and environment into its
// invocation (ninfd's ParseInvocation, ninf-meta's ParseMetaInvocation, ...).
template <class Inv>
using ParseInvocationFn = Status (*)(int argc, const char *const *argv, const EnvLookup &env,
                                     Inv *out);

// The process's environment, as the parsers read it.
const char *ProcessVariable(const char *name);

// Prints a command-line error the way every daemon does ("PROGRAM: MESSAGE"
// and where the settings are listed) on stderr. Returns 2, main's status.
int CommandLineError(std::string_view program, const Status &st);

// A daemon's first step: makes sure descriptors 0-2 are open
// (OpenStandardDescriptors), then parses the command line and environment
// into *inv. Returns the status
// main() returns at once (2 after printing the error, 0 after printing what
// --help or --version asked for), or nullopt when the daemon goes on.
template <class Inv>
std::optional<int> ReadCommandLine(std::string_view program, int argc, char **argv,
                                   ParseInvocationFn<Inv> parse, Inv *inv) {
  OpenStandardDescriptors();
  if (Status st = parse(argc, argv, ProcessVariable, inv); !st.ok())
    return CommandLineError(program, st);
  if (!inv->exit_now) return std::nullopt;
  std::fputs(inv->output.c_str(), stdout);
  return 0;
}

// Starts the log at `level`. Returns nullopt, or 2 after printing why the
// level was refused.
std::optional<int> StartLog(std::string_view program, const std::string &level);

// What SIGHUP calls: the same command line and environment (so the same
// config file) parsed again, their settings into *out.
template <class Inv>
auto Rereader(int argc, char **argv, ParseInvocationFn<Inv> parse) {
  using Settings = decltype(Inv::settings);
  return std::function<Status(Settings *)>([argc, argv, parse](Settings *out) {
    Inv again;
    NINF_RETURN_IF_ERROR(parse(argc, argv, ProcessVariable, &again));
    *out = std::move(again.settings);
    return Status::Ok();
  });
}

// What ninf-meta's or ninf-relay's main() runs once its command line is read.
template <class Server, class Inv>
struct TableProgram {
  using Settings = decltype(Inv::settings);
  std::string_view name;         // "ninf-meta"
  ParseInvocationFn<Inv> parse;  // what SIGHUP runs again
  std::span<const SettingSpecOf<Settings>> table;
  int fds_per_connection = 1;  // DaemonSpec's
  typename TableDaemon<Server, Settings>::Hooks hooks;
};

// The rest of such a main(): starts the log, warns of the other programs'
// variables that were not read, and runs Server as a TableDaemon until it
// stops. Returns main's exit status.
template <class Server, class Inv>
int RunTableDaemon(const TableProgram<Server, Inv> &program, int argc, char **argv,
                   const Inv &inv) {
  if (auto exit_status = StartLog(program.name, inv.settings.log_level)) return *exit_status;
  LogIgnoredVariables(inv.ignored_variables, program.name);
  const DaemonSpec spec{.max_connections = inv.settings.max_connections,
                        .fds_per_connection = program.fds_per_connection};
  return RunDaemon(spec, [&](uv_loop_t *loop) {
    // SIGHUP reads the same command line, environment and config file again.
    return std::make_unique<TableDaemon<Server, typename TableProgram<Server, Inv>::Settings>>(
        loop, program.name, program.table, inv.settings, Rereader(argc, argv, program.parse),
        program.hooks);
  });
}

// How long a start-up error may be when logged: its own text (paths,
// remedies) is logged whole.
inline constexpr std::size_t kStartupMessageLimit = 4096;

}  // namespace ninf::daemon
