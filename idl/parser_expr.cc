// The expression part of the parser: dimensions and CalcOrder, with C
// precedence plus '^' (see the grammar in parser.h).
#include <algorithm>
#include <string>
#include <utility>

#include "idl/parser.h"
#include "protocol/layout.h"

namespace ninf::idl {
namespace {

struct BinaryOp {
  int level;
  const char *spelling;
  ExprOp op;
};
// C precedence, loosest first. '^' and the unary operators sit below.
constexpr BinaryOp kBinary[] = {
    {0, "||", ExprOp::kOr}, {1, "&&", ExprOp::kAnd}, {2, "==", ExprOp::kEq}, {2, "!=", ExprOp::kNe},
    {3, "<", ExprOp::kLt},  {3, "<=", ExprOp::kLe},  {3, ">", ExprOp::kGt},  {3, ">=", ExprOp::kGe},
    {4, "+", ExprOp::kAdd}, {4, "-", ExprOp::kSub},  {5, "*", ExprOp::kMul}, {5, "/", ExprOp::kDiv},
    {5, "%", ExprOp::kMod},
};
constexpr int kBinaryLevels = 6;

// Words that start a statement or a clause. They never name a parameter in
// an expression, so `CalcOrder n + Calls ...` fails at 'Calls' instead of
// further on.
bool IsKeyword(std::string_view word) {
  static constexpr std::string_view kKeywords[] = {
      "Module",    "CompileOptions", "Library", "Globals", "Define",    "Required",
      "CalcOrder", "Backend",        "Calls",   "Reuse",   "Distribute"};
  for (std::string_view k : kKeywords)
    if (word == k) return true;
  return false;
}

const std::string kTooDeep =
    "expression nested too deeply (at most " + std::to_string(kMaxExprDepth) + " levels)";

}  // namespace

// Counts the recursive descent's nesting: "((((..." or "!!!!..." a few
// thousand deep would overflow the stack long before a node is made, so the
// parser's own recursion is bounded too. A parenthesis costs two levels
// (ParseExpr and ParseUnary), hence the factor 2.
class Parser::NestingGuard {
 public:
  explicit NestingGuard(Parser *p) : p_(p) {
    if (++p_->expr_nesting_ > 2 * kMaxExprDepth) {
      --p_->expr_nesting_;  // no destructor runs for a constructor that throws
      p_->Fail(p_->tok_.loc, kTooDeep);
    }
  }
  ~NestingGuard() { --p_->expr_nesting_; }
  NestingGuard(const NestingGuard &) = delete;
  NestingGuard &operator=(const NestingGuard &) = delete;

 private:
  Parser *p_;
};

// A long chain such as "a+a+...+a" nests as deeply as parentheses do once it
// is a tree, and ninfd and the clients refuse a tree deeper than
// kMaxExprDepth: refuse it here, where the IDL's author sees where.
Expr Parser::MakeNode(ExprOp op, std::vector<Expr> operands, const Location &loc) {
  Expr e;
  e.op = op;
  for (const Expr &o : operands) e.depth = std::max(e.depth, o.depth + 1);
  if (e.depth > kMaxExprDepth) Fail(loc, kTooDeep);
  e.operands = std::move(operands);
  e.loc = loc;
  return e;
}

Expr Parser::ParseExpr() {
  NestingGuard guard(this);
  Expr cond = ParseBinary(0);
  if (!tok_.Is("?")) return cond;
  Location loc = cond.loc;
  Advance();
  Expr then = ParseExpr();
  Expect(":");
  Expr otherwise = ParseExpr();
  return MakeNode(ExprOp::kCond, {std::move(cond), std::move(then), std::move(otherwise)}, loc);
}

Expr Parser::ParseBinary(int level) {
  if (level == kBinaryLevels) return ParseUnary();
  Expr left = ParseBinary(level + 1);
  for (;;) {
    const BinaryOp *found = nullptr;
    for (const BinaryOp &b : kBinary)
      if (b.level == level && tok_.Is(b.spelling)) found = &b;
    if (!found) return left;
    Advance();
    Expr right = ParseBinary(level + 1);
    Location loc = left.loc;
    left = MakeNode(found->op, {std::move(left), std::move(right)}, loc);
  }
}

Expr Parser::ParseUnary() {
  NestingGuard guard(this);
  if (tok_.Is("-") || tok_.Is("!")) {
    ExprOp op = tok_.Is("-") ? ExprOp::kNeg : ExprOp::kNot;
    Location loc = tok_.loc;
    Advance();
    return MakeNode(op, {ParseUnary()}, loc);
  }
  return ParsePower();
}

Expr Parser::ParsePower() {
  Expr base = ParsePrimary();
  if (!tok_.Is("^")) return base;
  Advance();
  Location loc = base.loc;
  return MakeNode(ExprOp::kPow, {std::move(base), ParseUnary()}, loc);
}

Expr Parser::ParsePrimary() {
  Expr e;
  e.loc = tok_.loc;
  if (tok_.kind == TokenKind::kNumber) {
    e.op = ExprOp::kConst;
    if (!ParseInteger(tok_.text, &e.value))
      diag_->Error(tok_.loc, "invalid integer constant '" + tok_.text + "'");
    Advance();
  } else if (tok_.kind == TokenKind::kChar) {
    // 'V': LAPACK's job characters, for `jobvl == 'V' ? n : 1`.
    e.op = ExprOp::kConst;
    if (!ParseCharLiteral(tok_.text, &e.value))
      diag_->Error(tok_.loc, "invalid character constant " + tok_.text +
                                 " (one character, or one escape such as '\\n')");
    Advance();
  } else if (tok_.kind == TokenKind::kIdent && !IsKeyword(tok_.text)) {
    e.op = ExprOp::kName;
    e.name = tok_.text;
    Advance();
  } else if (tok_.Is("(")) {
    Advance();
    e = ParseExpr();
    Expect(")");
  } else {
    FailExpected("an expression");
  }
  return e;
}

}  // namespace ninf::idl
