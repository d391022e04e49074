// Test fixture: a real ninfd on a free loopback port, as users run it.
//
//   ninf::test::Daemon d({"--registry", dir.path(), "--slots", "1"});
//   ninf::Channel ch(d.Connect(), 5000);   // talk to it
//   REQUIRE(d.Stop() == 0);                 // SIGTERM; it must exit 0
//
// The daemon is started with `--port 0 --ready-file FILE` plus the given
// arguments; the fixture waits until FILE holds the port. Set
// NINF_TEST_SERVER=host:port to run the tests against a daemon you started
// yourself (under gdb, say): the fixture then starts nothing, and Stop() and
// the process checks are no-ops.
//
// The ninfd binary is taken from the NINFD environment variable (meson test
// sets it) or from the build-time default. Its stderr (the log) goes to the
// test's stderr.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace ninf::test {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents by
// the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return path_; }
  std::string Join(const std::string &name) const { return path_ + "/" + name; }
  // Writes `text` into path()/name (mode 0644 or 0755).
  void WriteFile(const std::string &name, const std::string &text, bool executable = false) const;

 private:
  std::string path_;
};

// Path of the ninfd under test.
std::string NinfdPath();

class Daemon {
 public:
  // Starts ninfd (see above) with `args` and extra environment entries
  // ("NAME=value"), its log going to `log_file` when one is given. Throws
  // std::runtime_error if it does not become ready within 10 s or exits
  // first.
  // `program` starts another daemon of the same command-line conventions
  // (ninf-meta) instead of ninfd; NINF_TEST_SERVER then does not apply. A
  // `--port` among `args` replaces the default --port 0 (a daemon restarted
  // on the port its peers know).
  explicit Daemon(std::vector<std::string> args = {}, std::vector<std::string> env = {},
                  const std::string &log_file = "", const std::string &program = "");
  // Stops a daemon that is still running (SIGTERM, then SIGKILL after 20 s).
  ~Daemon();
  Daemon(const Daemon &) = delete;
  Daemon &operator=(const Daemon &) = delete;

  const std::string &host() const { return host_; }
  int port() const { return port_; }
  std::string address() const { return host_ + ":" + std::to_string(port_); }
  pid_t pid() const { return pid_; }
  // True when NINF_TEST_SERVER pointed the fixture at a running daemon.
  bool external() const { return pid_ <= 0; }

  // A new blocking TCP connection to the daemon (TCP_NODELAY). Throws
  // std::runtime_error when it cannot connect.
  int Connect() const;

  // Sends SIGTERM and waits up to `timeout_ms` for the exit. Returns the
  // exit code, 128 + signal if it was killed by one, or -1 on timeout (then
  // it is SIGKILLed). 0 for an external daemon.
  int Stop(int timeout_ms = 20000);

  // Sends a signal (SIGHUP, SIGINT, ...) without waiting.
  void Signal(int signum) const;

  // Whether the process is still alive (not yet exited).
  bool Running();

  // The daemon's direct children and those of them that are zombies
  // (exited but not reaped). Empty for an external daemon.
  std::vector<pid_t> Children() const;
  std::vector<pid_t> ZombieChildren() const;

  // Waits until none of the daemon's children is a zombie: reaping is
  // asynchronous (an executable killed a moment ago, say by SIGHUP, is a
  // zombie until ninfd's loop sees its exit), a leaked one stays. False
  // after `timeout_ms`.
  bool WaitNoZombies(int timeout_ms = 5000) const;

  // Waits until the daemon has no children at all (every executable ended
  // and was reaped); false after `timeout_ms`.
  bool WaitNoChildren(int timeout_ms = 5000) const;

  // Waits until the daemon has exactly `count` children, none of them a
  // zombie (with warm executables, the idle ones remain); false after
  // `timeout_ms`.
  bool WaitChildren(std::size_t count, int timeout_ms = 5000) const;

 private:
  void WaitReady(const std::string &ready_file);

  TempDir dir_;
  std::string host_ = "127.0.0.1";
  int port_ = 0;
  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_code_ = 0;
};

}  // namespace ninf::test
