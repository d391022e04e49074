// Unit tests of registry loading (server/registry.h) with good and broken
// entries in a temporary folder.
#include "server/registry.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "tests/server/daemon_fixture.h"
#include "tests/server/test_client.h"

using namespace ninf::server;
using ninf::test::FakeInterface;
using ninf::test::TempDir;

namespace {

const char kScript[] = "#!/bin/sh\nexit 0\n";

bool Mentions(const std::vector<std::string> &warnings, const std::string &what) {
  return std::any_of(warnings.begin(), warnings.end(),
                     [&](const std::string &w) { return w.find(what) != std::string::npos; });
}

}  // namespace

TEST_CASE("registry_loads_good_and_skips_broken_entries", "[registry]") {
  TempDir dir;
  // Good.
  dir.WriteFile("good.interface", FakeInterface("good"));
  dir.WriteFile("good", kScript, true);
  dir.WriteFile("other.interface", FakeInterface("other"));
  dir.WriteFile("other", kScript, true);
  // No executable next to the interface.
  dir.WriteFile("noexe.interface", FakeInterface("noexe"));
  // Executable file without the x bit.
  dir.WriteFile("notexec.interface", FakeInterface("notexec"));
  dir.WriteFile("notexec", kScript, false);
  // Text that is not a FunctionInterface.
  dir.WriteFile("garbled.interface", "name: \"garbled\"\nparams { this is not protobuf }\n");
  dir.WriteFile("garbled", kScript, true);
  // Parses, but fails ValidateInterface (an OUT scalar that is no pointer).
  dir.WriteFile("invalid.interface",
                "name: \"invalid\"\nparams { name: \"x\" mode: MODE_OUT type: TYPE_INT }\n");
  dir.WriteFile("invalid", kScript, true);
  // The file describes another function than its name says.
  dir.WriteFile("mismatch.interface", FakeInterface("something_else"));
  dir.WriteFile("mismatch", kScript, true);
  // A name that is not an identifier.
  dir.WriteFile("bad-name.interface", FakeInterface("bad-name"));
  dir.WriteFile("bad-name", kScript, true);
  // Files that are not entries at all are ignored silently.
  dir.WriteFile("README", "hello");
  dir.WriteFile(".interface", "");

  Registry reg;
  std::vector<std::string> warnings;
  REQUIRE(Registry::Load(dir.path(), &reg, &warnings).ok());
  CHECK(reg.Names() == std::vector<std::string>{"good", "other"});
  CHECK(reg.dir() == dir.path());
  const FunctionEntry *good = reg.Find("good");
  REQUIRE(good);
  CHECK(good->iface.name() == "good");
  CHECK(good->iface.params_size() == 3);
  CHECK(good->executable == dir.Join("good"));
  CHECK(reg.Find("noexe") == nullptr);
  CHECK(reg.Find("") == nullptr);

  CHECK(warnings.size() == 6);
  CHECK(Mentions(warnings, "noexe"));
  CHECK(Mentions(warnings, "not executable"));
  CHECK(Mentions(warnings, "cannot parse"));
  CHECK(Mentions(warnings, "invalid interface"));
  CHECK(Mentions(warnings, "something_else"));
  CHECK(Mentions(warnings, "not a valid function name"));
}

TEST_CASE("registry_missing_folder_is_an_error", "[registry]") {
  TempDir dir;
  Registry reg;
  std::vector<std::string> warnings;
  ninf::Status st = Registry::Load(dir.Join("nope"), &reg, &warnings);
  CHECK(st.code() == NINF_ERR_INVALID_ARGUMENT);
  CHECK_THAT(st.message(), Catch::Contains("nope"));
}

TEST_CASE("registry_empty_folder_is_fine", "[registry]") {
  TempDir dir;
  Registry reg;
  std::vector<std::string> warnings;
  REQUIRE(Registry::Load(dir.path(), &reg, &warnings).ok());
  CHECK(reg.size() == 0);
  CHECK(warnings.empty());
}

TEST_CASE("registry_function_names", "[registry]") {
  CHECK(IsValidFunctionName("dgesv"));
  CHECK(IsValidFunctionName("_x9"));
  CHECK_FALSE(IsValidFunctionName(""));
  CHECK_FALSE(IsValidFunctionName("9x"));
  CHECK_FALSE(IsValidFunctionName("../etc"));
  CHECK_FALSE(IsValidFunctionName("a.b"));
}
