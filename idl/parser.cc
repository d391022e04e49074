#include "idl/parser.h"

#include <utility>

namespace ninf::idl {
namespace {

struct ModeWord {
  const char *word;
  Mode mode;
};
constexpr ModeWord kModes[] = {
    {"IN", Mode::kIn},
    {"OUT", Mode::kOut},
    {"INOUT", Mode::kInout},
    {"WORK", Mode::kWork},
    {"mode_in", Mode::kIn},
    {"mode_out", Mode::kOut},
    {"mode_inout", Mode::kInout},
    {"mode_work", Mode::kWork},
};

struct TypeWord {
  const char *word;
  Type type;
};
constexpr TypeWord kTypes[] = {
#define NINF_IDL_TYPE_WORD_(NAME, Name, value, keyword, ctype, bytes, cls, kind) \
  {keyword, Type::k##Name},
    NINF_TYPE_MAP(NINF_IDL_TYPE_WORD_)
#undef NINF_IDL_TYPE_WORD_
};

// "char, short, ... or string", for the diagnostic of a missing type.
std::string TypeWords() {
  std::string s;
  for (std::size_t i = 0; i < std::size(kTypes); ++i)
    s += std::string(i == 0 ? "" : i + 1 == std::size(kTypes) ? " or " : ", ") + kTypes[i].word;
  return s;
}

std::string Describe(const Token &t) {
  switch (t.kind) {
    case TokenKind::kEnd:
      return "end of input";
    case TokenKind::kString:
      return "a string";
    case TokenKind::kChar:
    case TokenKind::kIdent:
    case TokenKind::kNumber:
    case TokenKind::kOther:
    case TokenKind::kPunct:
      return "'" + t.text + "'";
  }
  return "'" + t.text + "'";
}

}  // namespace

const char *ModeName(Mode mode) {
  switch (mode) {
    case Mode::kIn:
      return "IN";
    case Mode::kOut:
      return "OUT";
    case Mode::kInout:
      return "INOUT";
    case Mode::kWork:
      return "WORK";
  }
  return "?";
}

const char *TypeName(Type type) { return InfoOf(type).name; }

Parser::Parser(Lexer *lexer, Diagnostics *diag) : lexer_(lexer), diag_(diag) { Advance(); }

void Parser::Advance() { tok_ = lexer_->Next(); }

void Parser::Fail(const Location &loc, std::string message) {
  diag_->Error(loc, std::move(message));
  throw SyntaxError{};
}

void Parser::FailExpected(std::string_view what) {
  Fail(tok_.loc, "expected " + std::string(what) + ", found " + Describe(tok_));
}

void Parser::Expect(std::string_view punct) {
  if (!tok_.Is(punct)) FailExpected("'" + std::string(punct) + "'");
  Advance();
}

std::string Parser::ExpectIdent(std::string_view what) {
  if (tok_.kind != TokenKind::kIdent) FailExpected(what);
  std::string name = tok_.text;
  Advance();
  return name;
}

StringClause Parser::ExpectString(std::string_view what, bool join) {
  if (tok_.kind != TokenKind::kString) FailExpected(what);
  StringClause s{"", tok_.loc, true};
  do {
    s.value += tok_.text;
    Advance();
  } while (join && tok_.kind == TokenKind::kString);
  return s;
}

void Parser::Resync() {
  for (;;) {
    if (tok_.kind == TokenKind::kEnd || tok_.IsWord("Define")) return;
    if (tok_.Is(";") || tok_.Is("}")) {
      Advance();
      return;
    }
    if (tok_.Is("{")) {
      // Skip a whole C block so that its contents raise no errors.
      RawText ignored;
      lexer_->CaptureBlock(tok_.loc, &ignored);
      Advance();
      return;
    }
    Advance();
  }
}

void Parser::ParseFile(IdlFile *out) {
  while (tok_.kind != TokenKind::kEnd) {
    try {
      ParseStatement(out);
    } catch (const SyntaxError &) {
      Resync();
    }
  }
}

void Parser::ParseStatement(IdlFile *file) {
  if (tok_.Is(";")) {
    Advance();  // an empty statement, e.g. after a body
  } else if (tok_.IsWord("Module")) {
    Location loc = tok_.loc;
    Advance();
    std::string name = ExpectIdent("a module name after 'Module'");
    if (!file->module.empty()) {
      diag_->Error(loc,
                   "duplicate Module statement (the module is already '" + file->module + "')");
    } else {
      file->module = name;
      file->module_loc = loc;
    }
    Expect(";");
  } else if (tok_.IsWord("CompileOptions") || tok_.IsWord("Library")) {
    bool compile = tok_.text == "CompileOptions";
    std::string keyword = tok_.text;
    Advance();
    StringClause s = ExpectString("a string after '" + keyword + "'", true);
    (compile ? file->compile_options : file->libraries).push_back(s.value);
    Expect(";");
  } else if (tok_.IsWord("Globals")) {
    ParseGlobals(file);
  } else if (tok_.IsWord("Define")) {
    ParseDefine(file);
  } else {
    FailExpected("'Module', 'CompileOptions', 'Library', 'Globals' or 'Define'");
  }
}

void Parser::ParseGlobals(IdlFile *file) {
  Advance();
  if (!tok_.Is("{")) FailExpected("'{' after 'Globals'");
  RawText text;
  bool closed = lexer_->CaptureBlock(tok_.loc, &text);
  Advance();
  if (closed) file->globals.push_back(std::move(text));
}

void Parser::ParseDefine(IdlFile *file) {
  int errors_before = diag_->error_count();
  int tolerated = 0;  // errors that leave the Define whole (a missing ';')
  Advance();
  Define d;
  d.loc = tok_.loc;
  d.name = ExpectIdent("a function name after 'Define'");
  ParseParams(&d);
  while (ParseClause(&d)) {
  }
  if (tok_.IsWord("Calls")) {
    if (!ParseCalls(&d)) tolerated = 1;
  } else if (tok_.Is("{")) {
    d.body = Body::kCode;
    bool closed = lexer_->CaptureBlock(tok_.loc, &d.code);
    Advance();
    if (!closed) return;
  } else {
    FailExpected("'Calls' or a '{' body to end Define '" + d.name + "'");
  }
  // Errors that did not stop the parse (an empty inner dimension, a bad
  // literal) still make the Define unusable for the checks and generators.
  if (diag_->error_count() - tolerated == errors_before) file->defines.push_back(std::move(d));
}

void Parser::ParseParams(Define *d) {
  Expect("(");
  if (tok_.Is(")")) {
    Advance();
    return;
  }
  bool failed = false;
  for (;;) {
    try {
      d->params.push_back(ParseParam());
    } catch (const SyntaxError &) {
      failed = true;
      SkipParam();
    }
    if (tok_.Is(",")) {
      Advance();
    } else if (tok_.Is(")")) {
      Advance();
      break;
    } else if (failed) {
      throw SyntaxError{};  // already reported; let the statement resync
    } else {
      FailExpected("',' or ')'");
    }
  }
  if (failed) throw SyntaxError{};
}

// After an error inside one parameter: skips to the ',' or ')' that ends it,
// so that the following parameters are still checked.
void Parser::SkipParam() {
  int depth = 0;
  while (tok_.kind != TokenKind::kEnd && !tok_.Is(";") && !tok_.Is("{") && !tok_.IsWord("Define")) {
    if (depth == 0 && (tok_.Is(",") || tok_.Is(")"))) return;
    if (tok_.Is("(") || tok_.Is("[")) ++depth;
    if ((tok_.Is(")") || tok_.Is("]")) && depth > 0) --depth;
    Advance();
  }
}

Param Parser::ParseParam() {
  Param p;
  const ModeWord *mode = nullptr;
  for (const ModeWord &m : kModes)
    if (tok_.IsWord(m.word)) mode = &m;
  if (!mode) FailExpected("a parameter mode (IN, OUT, INOUT or WORK)");
  p.mode = mode->mode;
  Advance();
  const TypeWord *type = nullptr;
  for (const TypeWord &t : kTypes)
    if (tok_.IsWord(t.word)) type = &t;
  if (!type) FailExpected("a type (" + TypeWords() + ")");
  p.type = type->type;
  Advance();
  if (tok_.Is("*")) {
    p.pointer = true;
    Advance();
  }
  p.loc = tok_.loc;
  p.name = ExpectIdent("a parameter name");
  while (tok_.Is("[")) {
    Dim dim;
    dim.loc = tok_.loc;
    Advance();
    if (p.pointer && p.dims.empty())
      diag_->Error(dim.loc, "pointer parameter '" + p.name + "' cannot have dimensions");
    if (tok_.Is("]")) {
      dim.omitted = true;
      if (!p.dims.empty())
        diag_->Error(dim.loc, "only the first dimension of '" + p.name + "' may be empty");
    } else {
      dim.expr = ParseExpr();
    }
    Expect("]");
    p.dims.push_back(std::move(dim));
  }
  return p;
}

// One optional clause between the parameter list and Calls/body; false when
// the next token starts none.
bool Parser::ParseClause(Define *d) {
  auto once = [&](const StringClause &clause, const char *what) {
    if (clause.present)
      diag_->Error(tok_.loc, std::string("duplicate ") + what + " in Define '" + d->name + "'");
  };
  if (tok_.kind == TokenKind::kString) {
    once(d->description, "description");
    d->description = ExpectString("a description", true);
  } else if (tok_.IsWord("Required")) {
    once(d->required, "Required clause");
    Advance();
    d->required = ExpectString("a string after 'Required'");
  } else if (tok_.IsWord("Backend")) {
    once(d->backend, "Backend clause");
    Advance();
    d->backend = ExpectString("a string after 'Backend'");
  } else if (tok_.IsWord("Distribute")) {
    once(d->distribute, "Distribute clause");
    Advance();
    d->distribute = ExpectString("a string after 'Distribute'");
  } else if (tok_.IsWord("Reuse")) {
    once(d->reuse, "Reuse clause");
    Advance();
    d->reuse = ExpectString("a string after 'Reuse'");
  } else if (tok_.IsWord("CalcOrder")) {
    if (d->has_calc_order)
      diag_->Error(tok_.loc, "duplicate CalcOrder clause in Define '" + d->name + "'");
    Advance();
    d->calc_order = ParseExpr();
    d->has_calc_order = true;
  } else {
    return false;
  }
  return true;
}

bool Parser::ParseCalls(Define *d) {
  Advance();
  d->body = Body::kCalls;
  d->language = ExpectString("a language (\"C\" or \"Fortran\") after 'Calls'");
  d->callee_loc = tok_.loc;
  d->callee = ExpectIdent("the name of the called routine");
  Expect("(");
  if (!tok_.Is(")")) {
    for (;;) {
      CallArg arg{"", tok_.loc};
      arg.name = ExpectIdent("a parameter name");
      d->call_args.push_back(std::move(arg));
      if (!tok_.Is(",")) break;
      Advance();
    }
  }
  Location close = tok_.loc;
  Expect(")");
  if (tok_.Is(";")) {
    Advance();
    return true;
  }
  // The ';' forgotten before the next statement (or the end): said where it
  // belongs, just after the ')', and the parse goes on from that statement
  // with the Define kept, so that neither its own errors nor the next
  // Define's are hidden (issue 31). Anything else after the ')' is a
  // syntax error as before.
  const bool next_statement = tok_.kind == TokenKind::kEnd || tok_.IsWord("Define") ||
                              tok_.IsWord("Module") || tok_.IsWord("Library") ||
                              tok_.IsWord("CompileOptions") || tok_.IsWord("Globals");
  if (!next_statement) FailExpected("';'");
  Location after = close;
  ++after.col;
  ++after.offset;
  diag_->Error(after,
               "expected ';' after the Calls of Define '" + d->name + "', found " + Describe(tok_));
  return false;
}

void ParseIdl(std::string_view text, const std::string &file, Diagnostics *diag, IdlFile *out,
              SourceLines *originals) {
  Lexer lexer(text, file, diag, originals);
  Parser parser(&lexer, diag);
  out->path = file;
  parser.ParseFile(out);
  out->sources = lexer.files();
}

}  // namespace ninf::idl
