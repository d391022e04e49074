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

// The `registry` setting's entries become folders; "stdlib" (and an empty
// setting) is the standard library.
TEST_CASE("registry_folders_expand_stdlib", "[registry]") {
  CHECK(RegistryFolders("", "/std") == std::vector<std::string>{"/std"});
  CHECK(RegistryFolders("stdlib", "/std") == std::vector<std::string>{"/std"});
  CHECK(RegistryFolders("stdlib:/site", "/std") == std::vector<std::string>{"/std", "/site"});
  CHECK(RegistryFolders("/site:stdlib", "/std") == std::vector<std::string>{"/site", "/std"});
  CHECK(RegistryFolders("./stdlib", "/std") == std::vector<std::string>{"./stdlib"});
}

// Composition is a pure function: the last folder wins a name, and every
// replaced entry is reported with both folders.
TEST_CASE("registry_compose_later_folder_wins", "[registry]") {
  using Folder = std::map<std::string, FunctionEntry, std::less<>>;
  auto entry = [](const std::string &folder, const std::string &name) {
    FunctionEntry e;
    e.iface.set_name(name);
    e.folder = folder;
    e.executable = folder + "/" + name;
    return e;
  };
  std::vector<Folder> folders(3);
  folders[0] = {{"dgesv", entry("/std", "dgesv")}, {"ep", entry("/std", "ep")}};
  folders[1] = {{"dgesv", entry("/site", "dgesv")}, {"mine", entry("/site", "mine")}};
  folders[2] = {{"dgesv", entry("/test", "dgesv")}};
  std::vector<RegistryOverride> overrides;
  auto served = ComposeFolders(folders, &overrides);
  REQUIRE(served.size() == 3);
  CHECK(served.at("dgesv").executable == "/test/dgesv");
  CHECK(served.at("ep").folder == "/std");
  CHECK(served.at("mine").folder == "/site");
  CHECK(overrides ==
        std::vector<RegistryOverride>{{"dgesv", "/site", "/std"}, {"dgesv", "/test", "/site"}});
  CHECK(ComposeFolders({}, nullptr).empty());
}

TEST_CASE("registry_loads_two_folders", "[registry]") {
  TempDir std_dir, site;
  std_dir.WriteFile("dgesv.interface", FakeInterface("dgesv"));
  std_dir.WriteFile("dgesv", kScript, true);
  std_dir.WriteFile("ep.interface", FakeInterface("ep"));
  std_dir.WriteFile("ep", kScript, true);
  site.WriteFile("dgesv.interface", FakeInterface("dgesv"));
  site.WriteFile("dgesv", kScript, true);
  site.WriteFile("broken.interface", "not a text proto {");
  Registry reg;
  std::vector<std::string> warnings;
  std::vector<RegistryOverride> overrides;
  REQUIRE(Registry::Load({std_dir.path(), site.path()}, &reg, &warnings, &overrides).ok());
  CHECK(reg.Names() == std::vector<std::string>{"dgesv", "ep"});
  CHECK(reg.Find("dgesv")->executable == site.Join("dgesv"));
  CHECK(reg.Find("ep")->executable == std_dir.Join("ep"));
  CHECK(overrides == std::vector<RegistryOverride>{{"dgesv", site.path(), std_dir.path()}});
  CHECK(reg.dir() == std_dir.path() + ":" + site.path());
  CHECK(reg.folders() == std::vector<std::string>{std_dir.path(), site.path()});
  CHECK(Mentions(warnings, "broken"));

  // One unreadable folder refuses the whole list, and `reg` keeps its value.
  ninf::Status st = Registry::Load({std_dir.path(), site.Join("nope")}, &reg, &warnings);
  CHECK(st.code() == NINF_ERR_INVALID_ARGUMENT);
  CHECK_THAT(st.message(), Catch::Contains("nope"));
  CHECK(reg.size() == 2);
  // A folder named twice (here once with a trailing "/.") is a slip.
  st = Registry::Load({site.path(), std_dir.path(), site.path() + "/."}, &reg, &warnings);
  CHECK(st.code() == NINF_ERR_INVALID_ARGUMENT);
  CHECK_THAT(st.message(), Catch::Contains("is listed twice"));
  CHECK(Registry::Load(std::vector<std::string>{}, &reg, &warnings).code() ==
        NINF_ERR_INVALID_ARGUMENT);
}
