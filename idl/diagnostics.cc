#include "idl/diagnostics.h"

#include <algorithm>

namespace ninf::idl {

void Diagnostics::Error(const Location &loc, std::string message) {
  entries_.push_back({true, loc, std::move(message)});
}

void Diagnostics::Error(std::string message) {
  entries_.push_back({false, Location{}, std::move(message)});
}

std::string Diagnostics::Format() const {
  // Phases report in their own order (the parser first, then the checks);
  // sorting by offset in the preprocessed text gives the reader's order.
  std::vector<const Entry *> sorted;
  for (const Entry &e : entries_) sorted.push_back(&e);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Entry *a, const Entry *b) {
    if (a->has_location != b->has_location) return a->has_location;
    return a->has_location && a->loc.offset < b->loc.offset;
  });
  std::string out;
  for (const Entry *e : sorted) {
    if (e->has_location)
      out += e->loc.file + ":" + std::to_string(e->loc.line) + ":" + std::to_string(e->loc.col) +
             ": error: " + e->message + "\n";
    else
      out += "ninf-gen: error: " + e->message + "\n";
  }
  return out;
}

}  // namespace ninf::idl
