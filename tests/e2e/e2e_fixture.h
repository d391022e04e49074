// End-to-end fixture: the daemon fixture of tests/server (a real ninfd on a
// free loopback port, or NINF_TEST_SERVER=host:port for a daemon under gdb)
// serving the build tree's standard library, plus what calls tests ask of
// it. The destructor stops the daemon with SIGTERM, which must exit 0.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tests/server/daemon_fixture.h"

// Runs `body` in a forked child whose NINF_KEY_FILE is `key_file` ("" =
// unset) and returns what it returned (libninf reads its environment once
// per process: a fresh child sees the key file). The child exits 0.
std::string RunInChild(const std::string &key_file, const std::function<std::string()> &body);

// One user of UsersConfig: its name, the keys of its key file (one per
// line; "" for a user recognised by `table_extra` alone) and more lines of
// its [users.NAME] table (e.g. "groups = [\"chem\"]\nmax_slots = 1").
struct TestUser {
  std::string name;
  std::string keys;
  std::string table_extra;
};

// Writes each user's key file (mode 0600) and a config file of their
// [users.NAME] tables, with `top` (top-level keys) above and `tail` (more
// tables, e.g. [limits.NAME]) below, into `dir`; returns the flags that
// start a daemon with it ({"--config", PATH}). The user NAME's key file is
// dir/NAME.key, for tests that rewrite it.
std::vector<std::string> UsersConfig(const ninf::test::TempDir &dir,
                                     const std::vector<TestUser> &users,
                                     const std::string &tail = "", const std::string &top = "");

class E2EDaemon {
 public:
  explicit E2EDaemon(std::vector<std::string> extra_args = {}, const std::string &log_file = "")
      : daemon_(std::move(extra_args), {}, log_file) {}
  ~E2EDaemon();

  int port() const { return daemon_.port(); }
  // "ninf://host:port/function"
  std::string Name(const std::string &function) const {
    return "ninf://" + daemon_.address() + "/" + function;
  }
  // A counter from the daemon's stats reply (-1 when absent).
  long Stat(const std::string &name) const;
  // Polls Stat(name) for up to 5 s until it reaches `at_least`.
  long WaitForStat(const std::string &name, long at_least) const;
  // Children of the daemon in state Z, after giving reaping a moment.
  int ZombieChildren() const;
  pid_t pid() const { return daemon_.pid(); }
  // Open descriptors of the daemon process.
  int OpenFds() const;
  // The daemon's live children (its executables).
  std::vector<pid_t> Children() const { return daemon_.Children(); }
  // True once the daemon has no children left, within `timeout_ms`.
  bool WaitForNoChildren(int timeout_ms) const { return daemon_.WaitNoChildren(timeout_ms); }

 private:
  ninf::test::Daemon daemon_;
};
