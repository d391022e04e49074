// Dimension and CalcOrder expressions end to end: IDL text through ninf-gen's
// parser and checks into a FunctionInterface, then the evaluator that clients
// and executables share (EvalExpr, ComputeLayout), compared with an
// independent evaluation of ninf-gen's syntax tree.
//
// Properties: what ninf-gen accepts, ValidateInterface accepts (otherwise
// ninfd would skip the function); the prefix-order tree evaluates as the
// syntax tree does (same value or same error code); the layout follows.
//
// Input: "A B C D\nEXPR" (the values of the IN scalars a, b, c, d; missing
// ones are 0) or just "EXPR". The expression may only use expression
// characters, so that it cannot close the template around it.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "idl/checks.h"
#include "idl/diagnostics.h"
#include "idl/driver.h"
#include "ninf.pb.h"
#include "protocol/layout.h"
#include "protocol/scalar_codec.h"
#include "protocol/status.h"

namespace {

using ninf::idl::Expr;
using ninf::idl::ExprOp;

// a, b, c and d are the size parameters, x the array sized by the expression.
constexpr int kScalars = 4;
constexpr int kArrayIndex = 4;

bool IsExprChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view(" _+-*/%^()<>=!&|?:").find(c) != std::string_view::npos;
}

struct Result {
  int code = NINF_OK;
  int64_t value = 0;
};

Result Error(int code) { return {code, 0}; }

Result Power(int64_t base, int64_t exp) {
  if (exp < 0) return Error(NINF_ERR_ARGUMENT_MISMATCH);
  // Closed forms where repeated multiplication never overflows.
  if (base == 0) return {NINF_OK, exp == 0 ? 1 : 0};
  if (base == 1) return {NINF_OK, 1};
  if (base == -1) return {NINF_OK, exp % 2 ? -1 : 1};
  if (exp >= 64) return Error(NINF_ERR_OVERFLOW);  // |base| >= 2
  int64_t r = 1;
  for (int64_t i = 0; i < exp; ++i)
    if (__builtin_mul_overflow(r, base, &r)) return Error(NINF_ERR_OVERFLOW);
  return {NINF_OK, r};
}

// The reference: the documented semantics (protocol/layout.h) on the IDL's
// own tree, in the same evaluation order (operands left to right, both
// operands of every binary operator, only the taken branch of ?:).
Result Eval(const ninf::idl::Define &d, const Expr &e, const std::vector<int64_t> &values) {
  switch (e.op) {
    case ExprOp::kConst:
      return {NINF_OK, e.value};
    case ExprOp::kName: {
      int index = ninf::idl::FindParam(d, e.name);
      FUZZ_CHECK(index >= 0 && index < kScalars, "a checked name is no size parameter");
      return {NINF_OK, values[static_cast<std::size_t>(index)]};
    }
    case ExprOp::kCond: {
      Result c = Eval(d, e.operands[0], values);
      if (c.code) return c;
      return Eval(d, e.operands[c.value ? 1 : 2], values);
    }
    case ExprOp::kNeg:
    case ExprOp::kNot: {
      Result a = Eval(d, e.operands[0], values);
      if (a.code) return a;
      if (e.op == ExprOp::kNot) return {NINF_OK, !a.value};
      if (a.value == INT64_MIN) return Error(NINF_ERR_OVERFLOW);
      return {NINF_OK, -a.value};
    }
    case ExprOp::kAdd:
    case ExprOp::kSub:
    case ExprOp::kMul:
    case ExprOp::kDiv:
    case ExprOp::kMod:
    case ExprOp::kPow:
    case ExprOp::kLt:
    case ExprOp::kLe:
    case ExprOp::kGt:
    case ExprOp::kGe:
    case ExprOp::kEq:
    case ExprOp::kNe:
    case ExprOp::kAnd:
    case ExprOp::kOr:
      break;
  }
  Result ra = Eval(d, e.operands[0], values);
  if (ra.code) return ra;
  Result rb = Eval(d, e.operands[1], values);
  if (rb.code) return rb;
  const int64_t a = ra.value, b = rb.value;
  int64_t out = 0;
  switch (e.op) {
    case ExprOp::kAdd:
      return __builtin_add_overflow(a, b, &out) ? Error(NINF_ERR_OVERFLOW) : Result{0, out};
    case ExprOp::kSub:
      return __builtin_sub_overflow(a, b, &out) ? Error(NINF_ERR_OVERFLOW) : Result{0, out};
    case ExprOp::kMul:
      return __builtin_mul_overflow(a, b, &out) ? Error(NINF_ERR_OVERFLOW) : Result{0, out};
    case ExprOp::kDiv:
    case ExprOp::kMod:
      if (b == 0) return Error(NINF_ERR_ARGUMENT_MISMATCH);
      if (a == INT64_MIN && b == -1) return Error(NINF_ERR_OVERFLOW);
      return {NINF_OK, e.op == ExprOp::kDiv ? a / b : a % b};
    case ExprOp::kPow:
      return Power(a, b);
    case ExprOp::kLt:
      return {NINF_OK, a < b};
    case ExprOp::kLe:
      return {NINF_OK, a <= b};
    case ExprOp::kGt:
      return {NINF_OK, a > b};
    case ExprOp::kGe:
      return {NINF_OK, a >= b};
    case ExprOp::kEq:
      return {NINF_OK, a == b};
    case ExprOp::kNe:
      return {NINF_OK, a != b};
    case ExprOp::kAnd:
      return {NINF_OK, a && b};
    case ExprOp::kOr:
      return {NINF_OK, a || b};
    case ExprOp::kConst:
    case ExprOp::kName:
    case ExprOp::kNeg:
    case ExprOp::kNot:
    case ExprOp::kCond:
      break;
  }
  FUZZ_CHECK(false, "unreachable operator");
  return {};
}

// "1 -2 3" -> {1, -2, 3, 0}; anything that is not a number counts as 0.
std::vector<int64_t> ParseValues(std::string_view line) {
  std::vector<int64_t> values;
  std::size_t pos = 0;
  while (values.size() < kScalars && pos < line.size()) {
    std::size_t end = line.find(' ', pos);
    if (end == std::string_view::npos) end = line.size();
    int64_t v = 0;
    std::from_chars(line.data() + pos, line.data() + end, v);
    values.push_back(v);
    pos = end + 1;
  }
  values.resize(kScalars + 1, 0);  // and x, which is no scalar
  return values;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  ninf::fuzz::QuietProtobuf();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char *>(data), size);
  std::string_view expr = input;
  std::vector<int64_t> values = ParseValues("");
  if (std::size_t nl = input.find('\n'); nl != std::string_view::npos) {
    values = ParseValues(input.substr(0, nl));
    expr = input.substr(nl + 1);
  }
  if (expr.empty()) return 0;
  for (char c : expr)
    if (!IsExprChar(c)) return 0;

  const std::string e(expr);
  const std::string idl = "Define f(IN int a, IN short b, IN long c, IN char d, OUT long x[" + e +
                          "])\n  CalcOrder " + e + "\n  Calls \"C\" f(a, b, c, d, x);\n";
  ninf::idl::Diagnostics diag;
  ninf::idl::Compilation comp;
  if (!ninf::idl::CompileText(idl, "fuzz.idl", "", &diag, &comp)) {
    FUZZ_CHECK(!diag.ok(), "compilation failed without a diagnostic");
    return 0;
  }
  FUZZ_CHECK(comp.outputs.size() == 1 && comp.file.defines.size() == 1, "one Define, one output");
  const ninf::wire::FunctionInterface &iface = comp.outputs[0].iface;
  ninf::Status valid = ninf::ValidateInterface(iface);
  FUZZ_CHECK(valid.ok(),
             ("ninf-gen produced an interface that ninfd refuses: " + valid.message()).c_str());

  // The values as an executable receives them: through the scalar codec,
  // which refuses values out of their type's range.
  for (int i = 0; i < kScalars; ++i) {
    ninf::wire::Value v;
    v.set_i(values[static_cast<std::size_t>(i)]);
    ninf::ScalarSlot slot;
    int64_t decoded = 0;
    if (!ninf::DecodeScalar(iface.params(i), v, &slot, &decoded).ok()) return 0;
    FUZZ_CHECK(decoded == values[static_cast<std::size_t>(i)], "decoded integer changed");
  }

  const ninf::idl::Define &d = comp.file.defines[0];
  Result want = Eval(d, d.calc_order, values);
  int64_t got = 0;
  ninf::Status st = ninf::EvalExpr(iface, iface.calc_order(), values, &got);
  FUZZ_CHECK(st.code() == want.code, st.ToString().c_str());
  if (st.ok()) FUZZ_CHECK(got == want.value, "EvalExpr disagrees with the syntax tree");

  ninf::CallLayout layout;
  st = ninf::ComputeLayout(iface, values, 0, &layout);
  uint64_t bytes = 0;
  if (want.code)
    FUZZ_CHECK(st.code() == want.code, st.ToString().c_str());
  else if (want.value < 0)
    FUZZ_CHECK(st.code() == NINF_ERR_ARGUMENT_MISMATCH, st.ToString().c_str());
  else if (__builtin_mul_overflow(static_cast<uint64_t>(want.value), uint64_t{8}, &bytes))
    FUZZ_CHECK(st.code() == NINF_ERR_OVERFLOW, st.ToString().c_str());
  else
    FUZZ_CHECK(st.ok() && layout.params[kArrayIndex].bytes == bytes &&
                   layout.return_bytes == bytes && layout.send_bytes == 0,
               st.ToString().c_str());
  return 0;
}
