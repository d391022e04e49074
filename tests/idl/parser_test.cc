// Parser: the AST of each construct, clause order, expression trees and
// error recovery.
#include <catch2/catch.hpp>

#include "tests/idl/idl_test_util.h"

using namespace ninf::idl;
using ninf::idl::testing::Parse;

namespace {

// Expression tree in a compact prefix notation, e.g. "(+ a (* b 2))".
std::string Show(const Expr &e) {
  static const char *const kNames[] = {"",  "",   "neg", "!",  "+",  "-",  "*",  "/",  "%", "^",
                                       "<", "<=", ">",   ">=", "==", "!=", "&&", "||", "?"};
  if (e.op == ExprOp::kConst) return std::to_string(e.value);
  if (e.op == ExprOp::kName) return e.name;
  std::string s = std::string("(") + kNames[static_cast<int>(e.op)];
  for (const Expr &o : e.operands) s += " " + Show(o);
  return s + ")";
}

std::string ParseExprText(const std::string &expr) {
  IdlFile f;
  std::string errors = Parse("Define f() CalcOrder " + expr + " Calls \"C\" f();", &f);
  if (!errors.empty()) return errors;
  REQUIRE(f.defines.size() == 1);
  return Show(f.defines[0].calc_order);
}

}  // namespace

TEST_CASE("parser_module_statements", "[idl][parser]") {
  IdlFile f;
  std::string errors = Parse(
      "Module linpack;\nCompileOptions \"-O3\";\nCompileOptions \"-march=native\";\n"
      "Library \"-lopenblas\" \" -lm\";\nGlobals { #include <x.h>\n int g; }\n;;",
      &f);
  CHECK(errors == "");
  CHECK(f.module == "linpack");
  CHECK(f.compile_options == std::vector<std::string>{"-O3", "-march=native"});
  CHECK(f.libraries == std::vector<std::string>{"-lopenblas -lm"});
  REQUIRE(f.globals.size() == 1);
  CHECK(f.globals[0].text == " #include <x.h>\n int g; ");
  CHECK(f.globals[0].loc.line == 5);
  CHECK(f.defines.empty());
}

TEST_CASE("parser_define_with_calls", "[idl][parser]") {
  IdlFile f;
  std::string errors = Parse(
      "Define dgesv(mode_in int n, IN long nrhs, INOUT double a[n][lda], IN int lda,\n"
      "             OUT int ipiv[n], mode_inout double b[][ldb], IN short ldb,\n"
      "             OUT int *info, WORK scomplex w[n], mode_work dcomplex z[1],\n"
      "             IN string s, mode_out float x[2], IN char c)\n"
      "  CalcOrder n^3 Required \"lu.o\" \"solves\" Backend \"MPI\"\n"
      "  Calls \"Fortran\" dgesv(n, nrhs, a, lda, ipiv, b, ldb, info, n);\n",
      &f);
  CHECK(errors == "");
  REQUIRE(f.defines.size() == 1);
  const Define &d = f.defines[0];
  CHECK(d.name == "dgesv");
  CHECK(d.loc.line == 1);
  CHECK(d.loc.col == 8);
  REQUIRE(d.params.size() == 13);
  CHECK(d.params[0].mode == Mode::kIn);
  CHECK(d.params[0].type == Type::kInt);
  CHECK(d.params[1].type == Type::kLong);
  CHECK(d.params[2].mode == Mode::kInout);
  CHECK(d.params[2].type == Type::kDouble);
  REQUIRE(d.params[2].dims.size() == 2);
  CHECK(d.params[2].dims[0].expr.name == "n");
  CHECK(d.params[2].dims[1].expr.name == "lda");
  CHECK(d.params[4].mode == Mode::kOut);
  CHECK(d.params[5].mode == Mode::kInout);
  CHECK(d.params[5].dims[0].omitted);
  CHECK_FALSE(d.params[5].dims[1].omitted);
  CHECK(d.params[6].type == Type::kShort);
  CHECK(d.params[7].pointer);
  CHECK(d.params[7].dims.empty());
  CHECK(d.params[7].loc.col == 23);
  CHECK(d.params[8].mode == Mode::kWork);
  CHECK(d.params[8].type == Type::kScomplex);
  CHECK(d.params[9].mode == Mode::kWork);
  CHECK(d.params[9].type == Type::kDcomplex);
  CHECK(d.params[10].type == Type::kString);
  CHECK(d.params[11].mode == Mode::kOut);
  CHECK(d.params[11].type == Type::kFloat);
  CHECK(d.params[12].type == Type::kChar);
  CHECK(d.has_calc_order);
  CHECK(Show(d.calc_order) == "(^ n 3)");
  CHECK(d.required.value == "lu.o");
  CHECK(d.description.value == "solves");
  CHECK(d.backend.value == "MPI");
  CHECK(d.body == Body::kCalls);
  CHECK(d.language.value == "Fortran");
  CHECK(d.callee == "dgesv");
  REQUIRE(d.call_args.size() == 9);
  CHECK(d.call_args[8].name == "n");
  CHECK(d.call_args[8].loc.line == 6);
}

TEST_CASE("parser_define_with_body", "[idl][parser]") {
  IdlFile f;
  std::string errors = Parse(
      "Define add(IN int n, IN double a[n], OUT double b[n]) \"adds\"\n"
      "{\n  for (int i = 0; i < n; i++) b[i] = a[i] + 1; /* } */\n}\n"
      "Define next() Calls \"C\" next();",
      &f);
  CHECK(errors == "");
  REQUIRE(f.defines.size() == 2);
  const Define &d = f.defines[0];
  CHECK(d.body == Body::kCode);
  CHECK(d.code.text == "\n  for (int i = 0; i < n; i++) b[i] = a[i] + 1; /* } */\n");
  CHECK(d.code.loc.line == 2);
  CHECK(d.description.value == "adds");
  CHECK(f.defines[1].params.empty());
  CHECK(f.defines[1].call_args.empty());
}

TEST_CASE("parser_expression_precedence", "[idl][parser]") {
  CHECK(ParseExprText("a + b * c") == "(+ a (* b c))");
  CHECK(ParseExprText("a - b - c") == "(- (- a b) c)");
  CHECK(ParseExprText("a * b ^ 2") == "(* a (^ b 2))");
  CHECK(ParseExprText("2 ^ 3 ^ 2") == "(^ 2 (^ 3 2))");
  CHECK(ParseExprText("-n ^ 2") == "(neg (^ n 2))");
  CHECK(ParseExprText("n ^ -1") == "(^ n (neg 1))");
  CHECK(ParseExprText("!a + 1") == "(+ (! a) 1)");
  CHECK(ParseExprText("a < b == c >= d") == "(== (< a b) (>= c d))");
  CHECK(ParseExprText("a || b && c") == "(|| a (&& b c))");
  CHECK(ParseExprText("a ? b : c ? d : e") == "(? a b (? c d e))");
  CHECK(ParseExprText("a > 0 ? a * 2 : -a") == "(? (> a 0) (* a 2) (neg a))");
  CHECK(ParseExprText("(a + b) % 3 / 2") == "(/ (% (+ a b) 3) 2)");
  CHECK(ParseExprText("0x10 + 010") == "(+ 16 8)");
}

TEST_CASE("parser_reports_and_recovers", "[idl][parser]") {
  IdlFile f;
  std::string errors = Parse(
      "Module m\n"
      "Define a(IN foo x, OUT double y[, IN int n) Calls \"C\" a(n);\n"
      "Define b(IN int n) { n; }\n"
      "Define c(IN int n) \"no end\"\n"
      "Define d(IN int n, OUT double v[n][]) Calls \"C\" d(n, v);\n"
      "Define e(IN int n) Calls \"C\" e(n)\n"
      "Define f(IN int n) CalcOrder n + Calls \"C\" f(n);\n"
      "Define g(IN int n) CalcOrder 1.5 Calls \"C\" g(n);\n"
      "Globals int x;\n"
      "Define h(IN int n) Calls \"C\" h(n);",
      &f);
  CHECK(errors ==
        "t.idl:2:1: error: expected ';', found 'Define'\n"
        "t.idl:2:13: error: expected a type (char, short, int, long, float, double, scomplex, "
        "dcomplex or string), found 'foo'\n"
        "t.idl:2:33: error: expected an expression, found ','\n"
        "t.idl:5:1: error: expected 'Calls' or a '{' body to end Define 'c', found 'Define'\n"
        "t.idl:5:35: error: only the first dimension of 'v' may be empty\n"
        "t.idl:6:34: error: expected ';' after the Calls of Define 'e', found 'Define'\n"
        "t.idl:7:34: error: expected an expression, found 'Calls'\n"
        "t.idl:8:30: error: invalid integer constant '1.5'\n"
        "t.idl:9:9: error: expected '{' after 'Globals', found 'int'\n");
  // e lacks only its ';': it is kept, so the checks still see it.
  REQUIRE(f.defines.size() == 3);
  CHECK(f.defines[0].name == "b");
  CHECK(f.defines[1].name == "e");
  CHECK(f.defines[2].name == "h");
}

// Issue 31: a forgotten ';' at the end of a Define hid the file's other
// errors. It is reported where it belongs, and what follows is parsed.
TEST_CASE("parser_missing_semicolon_hides_nothing", "[idl][parser]") {
  IdlFile f;
  std::string errors = Parse(
      "Define a(IN int n) Calls \"C\" a(n)\n"
      "Define b(IN foo n) Calls \"C\" b(n);\n"
      "Define c(IN int n) Calls \"C\" c(n)\n"
      "Library \"-lm\";\n"
      "Define d(IN int n) Calls \"C\" d(n) junk;\n"
      "Define e(IN int n) Calls \"C\" e(n)",
      &f);
  CHECK(errors ==
        "t.idl:1:34: error: expected ';' after the Calls of Define 'a', found 'Define'\n"
        "t.idl:2:13: error: expected a type (char, short, int, long, float, double, scomplex, "
        "dcomplex or string), found 'foo'\n"
        "t.idl:3:34: error: expected ';' after the Calls of Define 'c', found 'Library'\n"
        "t.idl:5:35: error: expected ';', found 'junk'\n"
        "t.idl:6:34: error: expected ';' after the Calls of Define 'e', found end of input\n");
  REQUIRE(f.defines.size() == 3);
  CHECK(f.defines[0].name == "a");
  CHECK(f.defines[1].name == "c");
  CHECK(f.defines[2].name == "e");
  CHECK(f.libraries == std::vector<std::string>{"-lm"});
}

TEST_CASE("parser_rejects_duplicate_clauses_and_pointer_dims", "[idl][parser]") {
  IdlFile f;
  std::string errors = Parse(
      "Define a(OUT int *p[2]) \"x\" CalcOrder 1 Required \"a\" Required \"b\" CalcOrder 2 \"y\"\n"
      "  Backend \"MPI\" Backend \"MPI\" Calls \"C\" a(p);\nModule m; Module n;",
      &f);
  CHECK(errors ==
        "t.idl:1:20: error: pointer parameter 'p' cannot have dimensions\n"
        "t.idl:1:54: error: duplicate Required clause in Define 'a'\n"
        "t.idl:1:67: error: duplicate CalcOrder clause in Define 'a'\n"
        "t.idl:1:79: error: duplicate description in Define 'a'\n"
        "t.idl:2:17: error: duplicate Backend clause in Define 'a'\n"
        "t.idl:3:11: error: duplicate Module statement (the module is already 'm')\n");
  CHECK(f.defines.empty());
}
