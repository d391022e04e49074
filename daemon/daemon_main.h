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
#include <string>
#include <string_view>
#include <utility>

#include "daemon/descriptors.h"
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

// How long a start-up error may be when logged: its own text (paths,
// remedies) is logged whole.
inline constexpr std::size_t kStartupMessageLimit = 4096;

}  // namespace ninf::daemon
