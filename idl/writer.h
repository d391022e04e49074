// Text output of the generators: lines counted (for `#line`), long calls
// and signatures wrapped. Shared by gen_stub (the executables' C) and
// gen_client (what clients include).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "idl/ast.h"

namespace ninf::idl {

// Generated C lines stay within this many columns where they can.
inline constexpr std::size_t kMaxLine = 100;

// Accumulates the output and counts its lines, so that a `#line` directive
// can bring compiler messages back to the generated file after user code.
class Writer {
 public:
  void Line(const std::string &s = "") { Raw(s + "\n"); }
  void Raw(const std::string &s);
  // Emits `#line` for `text` at `loc`, the text, then `#line` back here.
  void UserCode(const RawText &text, const std::string &prefix, const std::string &suffix,
                const std::string &self);
  // Writes `head(args...)tail`, one argument per line when too long.
  void Call(const std::string &indent, const std::string &head,
            const std::vector<std::string> &args, const std::string &tail);
  // Writes `head`, `items` separated by ", ", then `tail`, as many items a
  // line as fit in kMaxLine columns: a full line ends with `line_end` (" &"
  // in Fortran), and the next begins with `continuation`.
  void Packed(const std::string &head, const std::vector<std::string> &items,
              const std::string &tail, const std::string &continuation,
              const std::string &line_end = "");
  std::string Take() { return std::move(out_); }

  // `s` as a C string literal.
  static std::string Quote(const std::string &s);

 private:
  std::string out_;
  int lines_ = 0;
};

// Text safe inside a C comment.
std::string CommentSafe(std::string s);

// Writes `text` as comment lines of at most kMaxLine columns, breaking
// after ", " (signatures are long): the first begins with `first`, the
// others with `next` (a C comment's by default).
void WrapComment(Writer &w, const std::string &text, const std::string &first = " * ",
                 const std::string &next = " *     ");

}  // namespace ninf::idl
