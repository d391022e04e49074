// Error reporting for ninf-gen: every phase records errors here and goes on,
// so one run reports as many problems as it can. Errors print as
// `file:line:col: error: message`, in the order they appear in the input.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "idl/ast.h"

namespace ninf::idl {

class Diagnostics {
 public:
  void Error(const Location &loc, std::string message);
  // An error with no source position (a tool that failed, a file that
  // cannot be written): prints as `ninf-gen: error: message`.
  void Error(std::string message);

  int error_count() const { return static_cast<int>(entries_.size()); }
  bool ok() const { return entries_.empty(); }

  // Every error, sorted by position in the input (stable for ties), one a
  // line. Positionless errors come last.
  std::string Format() const;
  void Print(std::ostream &out) const { out << Format(); }

 private:
  struct Entry {
    bool has_location;
    Location loc;
    std::string message;
  };
  std::vector<Entry> entries_;
};

}  // namespace ninf::idl
