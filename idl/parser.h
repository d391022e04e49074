// The Ninf IDL parser: a recursive-descent parser over the Lexer's tokens
// that builds an IdlFile. On a syntax error it reports
// `file:line:col: error: ...`, skips to a point where parsing can resume
// (the next ',' or ')' inside a parameter list; otherwise the next ';', a
// whole '{ ... }' block, a stray '}' or the next `Define`) and goes on.
// A Define with any error is left out of the result.
//
// Grammar (keywords are case-sensitive):
//   file      := { statement }
//   statement := "Module" IDENT ";" | "CompileOptions" STRING ";"
//              | "Library" STRING ";" | "Globals" BLOCK | define | ";"
//   define    := "Define" IDENT "(" [param { "," param }] ")" { clause }
//                ( "Calls" STRING IDENT "(" [IDENT { "," IDENT }] ")" ";" | BLOCK )
//   clause    := STRING | "Required" STRING | "CalcOrder" expr | "Backend" STRING
//              | "Reuse" STRING | "Distribute" STRING
//   param     := MODE TYPE ( "*" IDENT | IDENT { "[" [expr] "]" } )
//   expr      := or [ "?" expr ":" expr ]
//   binary levels, loosest first: ||, &&, == !=, < <= > >=, + -, * / %
//   unary     := ( "-" | "!" ) unary | power
//   power     := primary [ "^" unary ]        (right-associative, so -n^2 is -(n^2))
//   primary   := INTEGER | IDENT | "(" expr ")"
// Adjacent string literals are joined, as in C, in descriptions,
// CompileOptions and Library; the other clauses take one literal each.
#pragma once

#include <string>
#include <string_view>

#include "idl/ast.h"
#include "idl/diagnostics.h"
#include "idl/lexer.h"

namespace ninf::idl {

class Parser {
 public:
  Parser(Lexer *lexer, Diagnostics *diag);

  void ParseFile(IdlFile *out);

 private:
  struct SyntaxError {};

  void Advance();
  [[noreturn]] void Fail(const Location &loc, std::string message);
  [[noreturn]] void FailExpected(std::string_view what);
  void Expect(std::string_view punct);
  std::string ExpectIdent(std::string_view what);
  // With `join`, adjacent literals are one string, as in C. Clause values
  // take a single literal: in `Required "x.o" "text"`, "text" is the
  // description.
  StringClause ExpectString(std::string_view what, bool join = false);
  void Resync();

  void ParseStatement(IdlFile *file);
  void ParseGlobals(IdlFile *file);
  void ParseDefine(IdlFile *file);
  void ParseParams(Define *d);
  Param ParseParam();
  void SkipParam();
  bool ParseClause(Define *d);
  // False when the Calls lacked only its closing ';' (reported; the Define
  // is complete and still goes to the checks).
  bool ParseCalls(Define *d);

  class NestingGuard;
  Expr MakeNode(ExprOp op, std::vector<Expr> operands, const Location &loc);
  Expr ParseExpr();
  Expr ParseBinary(int level);
  Expr ParseUnary();
  Expr ParsePower();
  Expr ParsePrimary();

  Lexer *lexer_;
  Diagnostics *diag_;
  Token tok_;             // the one token of lookahead; the lexer never reads past it
  int expr_nesting_ = 0;  // ParseExpr/ParseUnary calls under way, see NestingGuard
};

// Lexes and parses `text` (cpp output) whose first line belongs to `file`.
void ParseIdl(std::string_view text, const std::string &file, Diagnostics *diag, IdlFile *out,
              SourceLines *originals = nullptr);

// How the IDL spells a mode or a type, for messages and generated comments.
const char *ModeName(Mode mode);
const char *TypeName(Type type);

}  // namespace ninf::idl
