// Expression precedence end to end: IDL text -> interface -> the same
// evaluator clients and executables use (ninf::EvalExpr).
#include <catch2/catch.hpp>

#include "protocol/layout.h"
#include "tests/idl/idl_test_util.h"

using ninf::idl::Compilation;
using ninf::idl::testing::Compile;

namespace {

// Evaluates `expr` as the CalcOrder of a function whose IN int scalars a,
// b, c have the given values (and as the dimension of an array, which must
// agree).
int64_t Eval(const std::string &expr, int64_t a, int64_t b, int64_t c) {
  Compilation comp;
  std::string errors = Compile("Define f(IN int a, IN int b, IN int c, OUT long x[" + expr +
                                   "]) CalcOrder " + expr + " Calls \"C\" f(a, b, c, x);",
                               &comp);
  INFO(errors);
  REQUIRE(errors.empty());
  const ninf::wire::FunctionInterface &iface = comp.outputs.at(0).iface;
  REQUIRE(ninf::ValidateInterface(iface).ok());
  std::vector<int64_t> values = {a, b, c, 0};
  int64_t order = 0, dim = 0;
  REQUIRE(ninf::EvalExpr(iface, iface.calc_order(), values, &order).ok());
  REQUIRE(ninf::EvalExpr(iface, iface.params(3).dims(0), values, &dim).ok());
  CHECK(order == dim);
  return order;
}

}  // namespace

TEST_CASE("expr_arithmetic_precedence", "[idl][expr]") {
  CHECK(Eval("a + b * c", 2, 3, 4) == 14);
  CHECK(Eval("a - b - c", 10, 3, 2) == 5);
  CHECK(Eval("a / b * c", 10, 3, 3) == 9);
  CHECK(Eval("a % b * c", 10, 4, 3) == 6);
  CHECK(Eval("(a + b) * c", 2, 3, 4) == 20);
  CHECK(Eval("-a + b", 2, 3, 0) == 1);
  CHECK(Eval("a - -b", 2, 3, 0) == 5);
}

TEST_CASE("expr_power_binds_tighter_and_to_the_right", "[idl][expr]") {
  CHECK(Eval("a ^ b ^ c", 2, 3, 2) == 512);
  CHECK(Eval("c * a ^ b", 2, 3, 5) == 40);
  CHECK(Eval("a ^ b * c", 2, 3, 5) == 40);
  CHECK(Eval("-a ^ 2", 3, 0, 0) == -9);
  CHECK(Eval("(-a) ^ 2", 3, 0, 0) == 9);
  CHECK(Eval("2 * a ^ 3 / 3 + 2 * a ^ 2 * b", 30, 1, 0) == 18000 + 1800);
}

TEST_CASE("expr_logic_and_conditionals", "[idl][expr]") {
  CHECK(Eval("a < b == 1", 1, 2, 0) == 1);
  CHECK(Eval("a < b == c > a", 1, 2, 0) == 0);
  CHECK(Eval("a || b && c", 1, 0, 0) == 1);
  CHECK(Eval("(a || b) && c", 1, 0, 0) == 0);
  CHECK(Eval("!a + 1", 0, 0, 0) == 2);
  CHECK(Eval("a != b", 4, 4, 0) == 0);
  CHECK(Eval("a <= b && b >= c", 1, 2, 2) == 1);
  CHECK(Eval("a > b ? a : b", 3, 7, 0) == 7);
  CHECK(Eval("a ? b : c ? 10 : 20", 0, 5, 0) == 20);
  CHECK(Eval("a ? b : c ? 10 : 20", 0, 5, 1) == 10);
  CHECK(Eval("a > 0 ? b / a : 0", 0, 5, 0) == 0);  // the untaken branch divides by zero
  CHECK(Eval("a + (b ? 1 : 2) * c", 1, 0, 3) == 7);
}

TEST_CASE("expr_power_of_0_1_and_minus_1_with_huge_exponents", "[idl][expr]") {
  // Found by fuzz/dim_expr_fuzz: these looped 2^63 times before.
  CHECK(Eval("a ^ 9223372036854775807", 1, 0, 0) == 1);
  CHECK(Eval("a ^ 9223372036854775807", 0, 0, 0) == 0);
  CHECK(Eval("a ^ 9223372036854775807", -1, 0, 0) == -1);
  CHECK(Eval("a ^ 9223372036854775806", -1, 0, 0) == 1);
  CHECK(Eval("a ^ 0", 0, 0, 0) == 1);
  CHECK(Eval("a ^ 62", 2, 0, 0) == (int64_t{1} << 62));
}

TEST_CASE("expr_nesting_is_limited_where_the_idl_is_written", "[idl][expr]") {
  auto define = [](const std::string &expr) {
    return "Define f(IN int a, OUT long x[" + expr + "]) Calls \"C\" f(a, x);";
  };
  // The deepest tree ninfd accepts compiles and evaluates.
  std::string chain = "a";
  for (int i = 1; i < ninf::kMaxExprDepth; ++i) chain = "- " + chain;
  Compilation comp;
  std::string deepest = Compile(define(chain), &comp);
  INFO(deepest);
  REQUIRE(deepest.empty());
  const ninf::wire::FunctionInterface &iface = comp.outputs.at(0).iface;
  REQUIRE(ninf::ValidateInterface(iface).ok());
  // One level more is refused by ninf-gen, not later by ninfd.
  std::string errors = Compile(define("- " + chain));
  CHECK(errors.find("nested too deeply") != std::string::npos);
  // A left-associative chain deepens the tree as parentheses do.
  std::string sum = "a";
  for (int i = 0; i < ninf::kMaxExprDepth; ++i) sum += "+a";
  CHECK(Compile(define(sum)).find("nested too deeply") != std::string::npos);
  // Thousands of parentheses or '!'s: an error, not a stack overflow.
  CHECK(Compile(define(std::string(5000, '(') + "a" + std::string(5000, ')')))
            .find("nested too deeply") != std::string::npos);
  CHECK(Compile(define(std::string(100000, '!') + "a")).find("nested too deeply") !=
        std::string::npos);
}

TEST_CASE("expr_character_constants_size_lapack_optional_arrays", "[idl][expr]") {
  // LAPACK's idiom: vl is n x n when jobvl is 'V', one element otherwise.
  Compilation comp;
  std::string errors = Compile(
      "Define f(IN char jobvl, IN int n, OUT double vl[jobvl == 'V' ? n * n : 1], "
      "OUT long k[jobvl == '\\x4e' ? 2 : 3]) Calls \"C\" f(jobvl, n, vl, k);",
      &comp);
  INFO(errors);
  REQUIRE(errors.empty());
  const ninf::wire::FunctionInterface &iface = comp.outputs.at(0).iface;
  REQUIRE(ninf::ValidateInterface(iface).ok());
  int64_t dim = 0;
  std::vector<int64_t> v = {'V', 10, 0, 0};
  REQUIRE(ninf::EvalExpr(iface, iface.params(2).dims(0), v, &dim).ok());
  CHECK(dim == 100);
  v = {'N', 10, 0, 0};
  REQUIRE(ninf::EvalExpr(iface, iface.params(2).dims(0), v, &dim).ok());
  CHECK(dim == 1);
  REQUIRE(ninf::EvalExpr(iface, iface.params(3).dims(0), v, &dim).ok());
  CHECK(dim == 2);  // '\x4e' is 'N'
  CHECK(Eval("a == '\\n' ? 1 : 0", '\n', 0, 0) == 1);
  CHECK(Eval("'\\377' + a", 0, 0, 0) == -1);  // as C's (signed) char gives it
}

TEST_CASE("expr_character_constants_hold_one_character", "[idl][expr]") {
  Compilation comp;
  std::string errors =
      Compile("Define f(IN char c, OUT double a[c == 'ab' ? 1 : 2]) Calls \"C\" f(c, a);", &comp);
  CHECK_THAT(errors, Catch::Contains("invalid character constant 'ab'"));
}
