// Runs a daemon's parser of its command line and environment (ninfd's
// ParseInvocation, ninf-meta's ParseMetaInvocation, ninf-relay's
// ParseRelayInvocation) on test arguments and a test environment, as main()
// runs it on the process's, and checks a shipped example config file against
// a settings table: the settings tests of all three daemons share them.
#pragma once

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "daemon/daemon_main.h"

namespace ninf::test {

// One daemon's parser as a test calls it: `program` followed by `args`, with
// `env` for the environment (a variable not in it is unset), into *inv.
template <class Inv>
struct ArgsParser {
  daemon::ParseInvocationFn<Inv> parse;
  const char *program;

  Status operator()(std::vector<std::string> args, Inv *inv,
                    const std::map<std::string, std::string> &env = {}) const {
    args.insert(args.begin(), program);
    std::vector<const char *> argv;
    for (const std::string &a : args) argv.push_back(a.c_str());
    return parse(
        static_cast<int>(argv.size()), argv.data(),
        [&env](const char *name) -> const char * {
          auto it = env.find(name);
          return it == env.end() ? nullptr : it->second.c_str();
        },
        inv);
  }
};

// Every row of `table` has its "\nKEY = " line in the file at `path` (the
// shipped example config documents every key).
template <class Spec>
void CheckDocumentsEveryKey(const char *path, std::span<const Spec> table) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE_FALSE(text.empty());
  for (const Spec &spec : table)
    CHECK_THAT(text, Catch::Contains("\n" + std::string(spec.name) + " = "));
}

}  // namespace ninf::test
