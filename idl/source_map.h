// Mapping positions in cpp output back to the original source. cpp keeps
// line numbers (through line markers) but not columns: it collapses runs of
// blanks and turns comments inside a line into one blank. These helpers
// recover the original columns so diagnostics point at the right byte.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ninf::idl {

// A blank inside a line, as C and cpp count them (no newline): shared by
// the lexer and the column mapping below, which must agree on it.
inline bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

// cpp collapses runs of blanks and replaces comments inside a line by one
// space, which moves columns. Given one line of cpp output and the same
// line of the original file, returns for each 0-based column of the former
// the 0-based column of the same character in the latter (one extra entry
// for the end of line). Empty when the lines do not match (macro
// expansion), in which case the caller keeps cpp's columns.
std::vector<int> AlignColumns(std::string_view preprocessed, std::string_view original);

// Lines of the original source files, loaded on first use.
class SourceLines {
 public:
  // Line `line` (1-based) of `file`, or nullptr when the file cannot be read
  // or is shorter.
  const std::string *Line(const std::string &file, int line);

 private:
  std::map<std::string, std::optional<std::vector<std::string>>> files_;
};

}  // namespace ninf::idl
