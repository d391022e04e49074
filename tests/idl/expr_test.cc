// Expression precedence end to end: IDL text -> interface -> the same
// evaluator clients and executables use (ninf::EvalExpr).
#include <catch2/catch.hpp>

#include "idl_test_util.h"
#include "layout.h"

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
