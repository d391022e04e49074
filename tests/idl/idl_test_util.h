// Helpers shared by the ninf-gen unit tests: run one phase on a string of
// IDL text (no cpp) and return what it produced.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "idl/diagnostics.h"
#include "idl/driver.h"
#include "idl/lexer.h"
#include "idl/parser.h"

namespace ninf::idl::testing {

inline std::vector<Token> Lex(std::string_view text, std::string *errors = nullptr) {
  Diagnostics diag;
  Lexer lexer(text, "t.idl", &diag);
  std::vector<Token> tokens;
  for (Token t = lexer.Next(); t.kind != TokenKind::kEnd; t = lexer.Next()) tokens.push_back(t);
  if (errors) *errors = diag.Format();
  return tokens;
}

// Parses without the checks; returns the diagnostics text.
inline std::string Parse(std::string_view text, IdlFile *out) {
  Diagnostics diag;
  ParseIdl(text, "t.idl", &diag, out);
  return diag.Format();
}

// Runs the whole pipeline but cpp; returns the diagnostics text.
inline std::string Compile(std::string_view text, Compilation *out = nullptr) {
  Diagnostics diag;
  Compilation local;
  CompileText(text, "t.idl", "", &diag, out ? out : &local);
  return diag.Format();
}

}  // namespace ninf::idl::testing
