// The registry: the functions ninfd serves, read from one folder.
//
// Every `DIR/NAME.interface` (protobuf text format of
// ninf.wire.FunctionInterface, as ninf-gen writes it) together with an
// executable file `DIR/NAME` is one served function. A broken entry (bad
// text, invalid interface, name mismatch, missing or non-executable
// program) is skipped with a warning, so one bad file never takes the whole
// library down.
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
};

class Registry {
 public:
  // Reads every entry of `dir`. Skipped entries are described, one sentence
  // each, in *warnings. Errors: NINF_ERR_INVALID_ARGUMENT when `dir` cannot
  // be read at all (a registry with no valid entry is not an error).
  static Status Load(const std::string &dir, Registry *out, std::vector<std::string> *warnings);

  // The entry of `name`, or null.
  const FunctionEntry *Find(std::string_view name) const;

  // Names of every served function, sorted.
  std::vector<std::string> Names() const;

  std::size_t size() const { return entries_.size(); }
  const std::string &dir() const { return dir_; }

 private:
  std::string dir_;
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
