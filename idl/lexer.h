// The Ninf IDL tokenizer. It reads the output of cpp and follows its line
// markers (`# 12 "file.idl"`), so every token carries its position in the
// original file. Blocks of C code (`Globals { ... }`, Define bodies) are not
// tokenized: the parser asks for them verbatim with CaptureBlock().
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "idl/ast.h"
#include "idl/diagnostics.h"
#include "idl/source_map.h"

namespace ninf::idl {

enum class TokenKind {
  kEnd,     // end of input
  kIdent,   // identifiers and keywords alike
  kNumber,  // a C preprocessing number, unchecked (see ParseInteger)
  kString,  // text holds the decoded value
  kChar,    // a character literal, text as written (ParseCharLiteral)
  kPunct,   // an operator or punctuator, text as written
  kOther,   // a byte that starts no C token
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  Location loc;

  bool Is(std::string_view punct) const { return kind == TokenKind::kPunct && text == punct; }
  bool IsWord(std::string_view word) const { return kind == TokenKind::kIdent && text == word; }
};

// Parses a C integer literal (decimal, 0x hex, 0 octal, optional u/l
// suffixes). False if it is not one or does not fit in int64_t.
bool ParseInteger(const std::string &spelling, int64_t *out);

// The value of a character literal as written ('V', '\n', '\x41'): the
// char's value as C gives it on this platform (signed char), so that
// `jobvl == 'V'` compares as the routine's own C would. False unless the
// literal holds exactly one character.
bool ParseCharLiteral(const std::string &spelling, int64_t *out);

class Lexer {
 public:
  // `file` names the input until the first line marker. With `originals`
  // the lexer corrects the columns cpp moved (see AlignColumns).
  Lexer(std::string_view text, std::string file, Diagnostics *diag,
        SourceLines *originals = nullptr);

  Token Next();

  // To be called right after Next() returned the '{' at `open`: stores the
  // text up to the matching '}' (strings, character constants, comments and
  // directive lines do not count) and moves past it. At the end of input it
  // reports an error at `open` and returns false.
  bool CaptureBlock(const Location &open, RawText *out);

  // Every file the line markers read so far named (the input and what it
  // included), in order of first appearance.
  const std::vector<std::string> &files() const { return files_; }

 private:
  char Peek(std::size_t ahead = 0) const;
  Location Loc(std::size_t offset);
  int Column(std::size_t offset);
  void NewLine();
  void SkipSpace();
  void SkipLineComment();
  void SkipBlockComment();
  void SkipQuoted(char quote);
  void Directive(bool in_block);
  Token ReadString(Location loc);
  Token ReadPunct(Location loc);

  std::string_view text_;
  std::size_t pos_ = 0;
  std::string file_;
  int line_ = 1;
  std::size_t line_start_ = 0;
  bool bol_ = true;  // only blanks and comments since the line started
  Diagnostics *diag_;
  SourceLines *originals_;
  std::size_t colmap_line_start_ = static_cast<std::size_t>(-1);
  std::vector<int> colmap_;
  std::vector<std::string> files_;
};

}  // namespace ninf::idl
