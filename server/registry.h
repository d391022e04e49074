// The registry: the functions ninfd serves, read from one or more folders.
//
// Every `DIR/NAME.interface` (protobuf text format of
// ninf.wire.FunctionInterface, as ninf-gen writes it) together with an
// executable file `DIR/NAME` is one served function. A broken entry (bad
// text, invalid interface, name mismatch, missing or non-executable
// program) is skipped with a warning, so one bad file never takes the whole
// library down.
//
// Several folders compose (the standard library, then a site's): a later
// folder's function replaces an earlier one of the same name, and each such
// override is reported so that ninfd logs which folder wins.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ninf.pb.h"
#include "protocol/status.h"

namespace ninf::server {

struct FunctionEntry {
  wire::FunctionInterface iface;
  std::string executable;  // absolute or registry-relative path of the program
  std::string folder;      // the registry folder it was read from
};

// A function of a later folder that replaced one of an earlier folder.
struct RegistryOverride {
  std::string name;
  std::string folder;    // the folder whose function is served
  std::string replaced;  // the folder whose function is not
  bool operator==(const RegistryOverride &) const = default;
};

// The word that stands for the standard library in the `registry` setting.
inline constexpr std::string_view kStandardLibraryWord = "stdlib";

// The folders the `registry` setting names, in order: its ':'-joined
// entries, `stdlib` (and an empty setting) replaced by `stdlib_dir`. Pure.
std::vector<std::string> RegistryFolders(std::string_view setting, const std::string &stdlib_dir);

// Folder by folder, in order, the entries read from each: what is served
// is the last entry of each name. Pure: `overrides` (may be null) receives
// one record per replaced entry, in the order they happen.
std::map<std::string, FunctionEntry, std::less<>> ComposeFolders(
    std::vector<std::map<std::string, FunctionEntry, std::less<>>> folders,
    std::vector<RegistryOverride> *overrides);

// Logs each override at info: event=registry_override function=NAME
// folder=WINNER replaces=LOSER, so an administrator sees which folder's
// function is served (at start and on every reload).
void LogOverrides(const std::vector<RegistryOverride> &overrides);

class Registry {
 public:
  // Reads every entry of each of `dirs` and composes them (ComposeFolders):
  // a later folder wins a name. Skipped entries are described, one sentence
  // each, in *warnings; replaced ones in *overrides. Errors:
  // NINF_ERR_INVALID_ARGUMENT when `dirs` is empty, names a folder twice,
  // or a folder cannot be read at all (a registry with no valid entry is
  // not an error). `out` is left unchanged on error.
  static Status Load(const std::vector<std::string> &dirs, Registry *out,
                     std::vector<std::string> *warnings,
                     std::vector<RegistryOverride> *overrides = nullptr);
  // One folder.
  static Status Load(const std::string &dir, Registry *out, std::vector<std::string> *warnings) {
    return Load(std::vector<std::string>{dir}, out, warnings);
  }

  // The entry of `name`, or null.
  const FunctionEntry *Find(std::string_view name) const;

  // Names of every served function, sorted.
  std::vector<std::string> Names() const;

  std::size_t size() const { return entries_.size(); }
  // The folders, in the order they compose (what a reload reads again).
  const std::vector<std::string> &folders() const { return folders_; }
  // The folders joined by ':', for log lines; the one folder for one.
  std::string dir() const;

 private:
  std::vector<std::string> folders_;
  std::map<std::string, FunctionEntry, std::less<>> entries_;
};

// Function names are C identifiers: they become file names and environment
// variable values, so nothing else is accepted.
bool IsValidFunctionName(std::string_view name);

// The registry used when none is configured: the build tree's
// `stubs/registry` next to this ninfd (<dir of ninfd>/../stubs/registry) if
// that folder exists, so a ninfd started from the build tree serves the
// standard library; otherwise the install location.
std::string DefaultRegistryDir();

}  // namespace ninf::server
