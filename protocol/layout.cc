#include "protocol/layout.h"

#include <string>

#include "protocol/utf8.h"

namespace ninf {
namespace {

using Op = wire::ExprNode;

int Arity(int op) {
  switch (op) {
    case Op::CONST:
    case Op::PARAM:
      return 0;
    case Op::NEG:
    case Op::NOT:
      return 1;
    case Op::COND:
      return 3;
    default:
      return (op >= Op::ADD && op <= Op::OR) ? 2 : -1;
  }
}

Status Overflow() { return Status(NINF_ERR_OVERFLOW, "dimension expression overflows 64 bits"); }

Status Power(int64_t base, int64_t exp, int64_t *out) {
  if (exp < 0)
    return Status(NINF_ERR_ARGUMENT_MISMATCH, "negative exponent in dimension expression");
  // 0, 1 and -1 never overflow, whatever the exponent: answer them directly,
  // so that a client-supplied 2^63-1 does not loop for centuries.
  if (base == 0 || base == 1) {
    *out = exp == 0 ? 1 : base;
    return Status::Ok();
  }
  if (base == -1) {
    *out = exp % 2 ? -1 : 1;
    return Status::Ok();
  }
  // |base| >= 2 overflows int64 by exponent 64 at the latest.
  if (exp >= 64) return Overflow();
  int64_t r = 1;
  while (exp-- > 0)
    if (__builtin_mul_overflow(r, base, &r)) return Overflow();
  *out = r;
  return Status::Ok();
}

Status Binary(int op, int64_t a, int64_t b, int64_t *out) {
  switch (op) {
    case Op::ADD:
      return __builtin_add_overflow(a, b, out) ? Overflow() : Status::Ok();
    case Op::SUB:
      return __builtin_sub_overflow(a, b, out) ? Overflow() : Status::Ok();
    case Op::MUL:
      return __builtin_mul_overflow(a, b, out) ? Overflow() : Status::Ok();
    case Op::DIV:
    case Op::MOD:
      if (b == 0)
        return Status(NINF_ERR_ARGUMENT_MISMATCH, "division by zero in dimension expression");
      if (a == INT64_MIN && b == -1) return Overflow();
      *out = op == Op::DIV ? a / b : a % b;
      return Status::Ok();
    case Op::POW:
      return Power(a, b, out);
    case Op::LT:
      *out = a < b;
      break;
    case Op::LE:
      *out = a <= b;
      break;
    case Op::GT:
      *out = a > b;
      break;
    case Op::GE:
      *out = a >= b;
      break;
    case Op::EQ:
      *out = a == b;
      break;
    case Op::NE:
      *out = a != b;
      break;
    case Op::AND:
      *out = a && b;
      break;
    case Op::OR:
      *out = a || b;
      break;
    default:
      return Status(NINF_ERR_PROTOCOL, "unknown expression operator");
  }
  return Status::Ok();
}

bool RefersToInInteger(const wire::FunctionInterface &iface, int64_t index) {
  if (index < 0 || index >= iface.params_size()) return false;
  const wire::Param &p = iface.params(static_cast<int>(index));
  return IsInScalar(p) && IsIntegerType(p.type());
}

// Walks the subtree starting at nodes[*pos]; evaluates it when `values` is
// non-null, otherwise only checks its shape. Both COND branches are walked so
// that the position stays right, but only the taken one is evaluated: the
// other may legitimately divide by zero.
Status Walk(const wire::FunctionInterface &iface, const wire::Expr &e, int *pos,
            const std::span<const int64_t> *values, int64_t *out, int depth) {
  if (depth > kMaxExprDepth)
    return Status(NINF_ERR_PROTOCOL, "dimension expression nested too deeply");
  if (*pos >= e.nodes_size()) return Status(NINF_ERR_PROTOCOL, "truncated dimension expression");
  const wire::ExprNode &n = e.nodes((*pos)++);
  int arity = Arity(n.op());
  if (arity < 0) return Status(NINF_ERR_PROTOCOL, "unknown expression operator");
  if (n.op() == Op::CONST) {
    *out = n.value();
    return Status::Ok();
  }
  if (n.op() == Op::PARAM) {
    if (!RefersToInInteger(iface, n.value()))
      return Status(NINF_ERR_PROTOCOL, "dimension expression refers to parameter " +
                                           std::to_string(n.value()) +
                                           ", not an IN integer scalar");
    *out = values ? (*values)[static_cast<std::size_t>(n.value())] : 0;
    return Status::Ok();
  }
  int64_t a = 0, b = 0, c = 0;
  NINF_RETURN_IF_ERROR(Walk(iface, e, pos, values, &a, depth + 1));
  if (n.op() == Op::COND) {
    // Evaluate only the taken branch; walk (shape-check) the other.
    const std::span<const int64_t> *taken_b = (values && a) ? values : nullptr;
    const std::span<const int64_t> *taken_c = (values && !a) ? values : nullptr;
    NINF_RETURN_IF_ERROR(Walk(iface, e, pos, taken_b, &b, depth + 1));
    NINF_RETURN_IF_ERROR(Walk(iface, e, pos, taken_c, &c, depth + 1));
    *out = a ? b : c;
    return Status::Ok();
  }
  if (arity == 1) {
    if (n.op() == Op::NOT) {
      *out = !a;
      return Status::Ok();
    }
    if (a == INT64_MIN) return Overflow();
    *out = -a;
    return Status::Ok();
  }
  NINF_RETURN_IF_ERROR(Walk(iface, e, pos, values, &b, depth + 1));
  if (!values) {
    *out = 0;
    return Status::Ok();
  }
  return Binary(n.op(), a, b, out);
}

const char *TypeName(wire::Type t) {
  const ninf_type_info *info = ninf_type_info_of(t);
  return info ? info->name : "?";
}

}  // namespace

const char *ModeName(wire::Mode m) {
  switch (static_cast<ninf_mode>(m)) {
#define NINF_MODE_NAME_(NAME, value, word) \
  case NINF_MODE_##NAME:                   \
    return word;
    NINF_MODE_MAP(NINF_MODE_NAME_)
#undef NINF_MODE_NAME_
  }
  return "?";
}

uint64_t ElementSize(wire::Type type) {
  const ninf_type_info *info = ninf_type_info_of(type);
  return info ? info->element_size : 0;
}

bool IsIntegerType(wire::Type type) {
  const ninf_type_info *info = ninf_type_info_of(type);
  return info && info->cls == NINF_CLASS_INTEGER;
}

Status EvalExpr(const wire::FunctionInterface &iface, const wire::Expr &expr,
                std::span<const int64_t> values, int64_t *out) {
  if (values.size() < static_cast<std::size_t>(iface.params_size()))
    return Status(NINF_ERR_INTERNAL, "fewer values than parameters");
  int pos = 0;
  NINF_RETURN_IF_ERROR(Walk(iface, expr, &pos, &values, out, 0));
  if (pos != expr.nodes_size())
    return Status(NINF_ERR_PROTOCOL, "trailing nodes in dimension expression");
  return Status::Ok();
}

Status ValidateInterface(const wire::FunctionInterface &iface) {
  if (iface.name().empty()) return Status(NINF_ERR_PROTOCOL, "interface without a name");
  // A client's protobuf refuses the whole FRAME_INTERFACE over one bad byte.
  bool text_ok = IsValidUtf8(iface.name()) && IsValidUtf8(iface.module()) &&
                 IsValidUtf8(iface.description()) && IsValidUtf8(iface.backend()) &&
                 IsValidUtf8(iface.distribute());
  for (const wire::Param &p : iface.params()) text_ok = text_ok && IsValidUtf8(p.name());
  if (!text_ok) return Status(NINF_ERR_PROTOCOL, "interface text is not valid UTF-8");
  auto check_expr = [&](const wire::Expr &e) -> Status {
    int pos = 0;
    int64_t ignored = 0;
    NINF_RETURN_IF_ERROR(Walk(iface, e, &pos, nullptr, &ignored, 0));
    if (pos != e.nodes_size()) return Status(NINF_ERR_PROTOCOL, "trailing nodes in expression");
    return Status::Ok();
  };
  for (const wire::Param &p : iface.params()) {
    if (!wire::Mode_IsValid(p.mode()) || !wire::Type_IsValid(p.type()))
      return Status(NINF_ERR_PROTOCOL, "parameter '" + p.name() + "' has an unknown mode or type");
    if (p.type() == wire::TYPE_STRING && !IsInScalar(p))
      return Status(NINF_ERR_PROTOCOL, "parameter '" + p.name() + "': strings are IN scalars only");
    if (!IsArray(p) && p.mode() != wire::MODE_IN)
      return Status(NINF_ERR_PROTOCOL, "parameter '" + p.name() +
                                           "': OUT/INOUT/WORK scalars must be pointers or arrays");
    for (const wire::Expr &d : p.dims()) NINF_RETURN_IF_ERROR(check_expr(d));
  }
  if (iface.calc_order().nodes_size()) NINF_RETURN_IF_ERROR(check_expr(iface.calc_order()));
  return Status::Ok();
}

Status ComputeLayout(const wire::FunctionInterface &iface, std::span<const int64_t> values,
                     uint64_t max_call_bytes, CallLayout *out) {
  CallLayout layout;
  layout.params.resize(static_cast<std::size_t>(iface.params_size()));
  for (int i = 0; i < iface.params_size(); ++i) {
    const wire::Param &p = iface.params(i);
    if (!IsArray(p)) continue;
    uint64_t elements = 1;
    for (const wire::Expr &d : p.dims()) {
      int64_t extent = 0;
      NINF_RETURN_IF_ERROR(EvalExpr(iface, d, values, &extent));
      if (extent < 0)
        return Status(NINF_ERR_ARGUMENT_MISMATCH,
                      "array '" + p.name() + "' has negative dimension " + std::to_string(extent));
      if (__builtin_mul_overflow(elements, static_cast<uint64_t>(extent), &elements))
        return Status(NINF_ERR_OVERFLOW, "array '" + p.name() + "' has more elements than 2^64");
    }
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(elements, ElementSize(p.type()), &bytes))
      return Status(NINF_ERR_OVERFLOW, "array '" + p.name() + "' is larger than 2^64 bytes");
    layout.params[static_cast<std::size_t>(i)] = {elements, bytes};
    if (__builtin_add_overflow(layout.total_bytes, bytes, &layout.total_bytes))
      return Status(NINF_ERR_OVERFLOW, "the call's arrays add up to more than 2^64 bytes");
    if (SendsArray(p)) layout.send_bytes += bytes;
    if (ReturnsArray(p)) layout.return_bytes += bytes;
  }
  if (max_call_bytes && layout.total_bytes > max_call_bytes)
    return Status(NINF_ERR_TOO_LARGE, "the call needs " + std::to_string(layout.total_bytes) +
                                          " bytes of arrays, over the per-call maximum of " +
                                          std::to_string(max_call_bytes));
  *out = std::move(layout);
  return Status::Ok();
}

namespace {

// Binding strength of each operator when printed, loosest first, mirroring
// the IDL grammar (idl/parser_expr.cc): C precedence with '^' above the
// unary operators and below a primary (a name, a constant, a parenthesis).
enum Prec {
  kCond,
  kOr,
  kAnd,
  kEquality,
  kRelation,
  kAdditive,
  kMultiplicative,
  kUnary,
  kPower,
  kPrimary
};

struct Printed {
  std::string text;
  int prec;
  bool char_param = false;  // a char parameter: a constant it is compared with is a character
  bool constant = false;
  int64_t value = 0;  // when `constant`
};

// 'V' for a constant compared with a char parameter (`jobvl == 'V' ? n :
// 1` reads as the IDL wrote it, not as `jobvl == 86`); printable ASCII
// only, and not the quote or backslash, which would need an escape.
void AsCharacter(Printed *p) {
  if (p->constant && p->value >= 0x20 && p->value < 0x7f && p->value != '\'' && p->value != '\\')
    p->text = std::string("'") + static_cast<char>(p->value) + "'";
}

const char *Spelling(int op) {
  switch (op) {
    case Op::NEG:
      return "-";
    case Op::NOT:
      return "!";
    case Op::ADD:
      return "+";
    case Op::SUB:
      return "-";
    case Op::MUL:
      return "*";
    case Op::DIV:
      return "/";
    case Op::MOD:
      return "%";
    case Op::POW:
      return "^";
    case Op::LT:
      return "<";
    case Op::LE:
      return "<=";
    case Op::GT:
      return ">";
    case Op::GE:
      return ">=";
    case Op::EQ:
      return "==";
    case Op::NE:
      return "!=";
    case Op::AND:
      return "&&";
    case Op::OR:
      return "||";
    default:
      return "?";
  }
}

int BinaryPrec(int op) {
  switch (op) {
    case Op::OR:
      return kOr;
    case Op::AND:
      return kAnd;
    case Op::EQ:
    case Op::NE:
      return kEquality;
    case Op::LT:
    case Op::LE:
    case Op::GT:
    case Op::GE:
      return kRelation;
    case Op::ADD:
    case Op::SUB:
      return kAdditive;
    case Op::POW:
      return kPower;
    default:
      return kMultiplicative;
  }
}

std::string Wrap(const Printed &p, bool parens) { return parens ? "(" + p.text + ")" : p.text; }

// Prints the prefix-ordered subtree at nodes[*pos] in the IDL's own infix
// notation, with only the parentheses the grammar needs. It never fails: an
// interface may come from a peer and a message must still be printable, so
// a malformed tree prints "?" where it breaks (ValidateInterface is what
// refuses such a tree).
Printed Print(const wire::FunctionInterface &iface, const wire::Expr &e, int *pos, int depth) {
  if (depth > kMaxExprDepth || *pos >= e.nodes_size()) return {"?", kPrimary};
  const wire::ExprNode &n = e.nodes((*pos)++);
  const int arity = Arity(n.op());
  if (arity < 0) return {"?", kPrimary};
  if (n.op() == Op::CONST)  // "-1" re-reads as a negation, so it binds as one
    return {std::to_string(n.value()), n.value() < 0 ? kUnary : kPrimary, false, true, n.value()};
  if (n.op() == Op::PARAM) {
    if (n.value() < 0 || n.value() >= iface.params_size()) return {"?", kPrimary};
    const wire::Param &p = iface.params(static_cast<int>(n.value()));
    return {p.name(), kPrimary, p.type() == wire::TYPE_CHAR};
  }
  Printed a = Print(iface, e, pos, depth + 1);
  if (arity == 1) {  // "-(-n)", not "--n", which reads as C's decrement
    const bool parens = a.prec < kUnary || (n.op() == Op::NEG && a.text.starts_with('-'));
    return {Spelling(n.op()) + Wrap(a, parens), kUnary};
  }
  Printed b = Print(iface, e, pos, depth + 1);
  if (n.op() == Op::COND) {
    Printed c = Print(iface, e, pos, depth + 1);
    return {Wrap(a, a.prec == kCond) + " ? " + b.text + " : " + c.text, kCond};
  }
  const int prec = BinaryPrec(n.op());
  if (prec == kEquality || prec == kRelation) {
    if (a.char_param) AsCharacter(&b);
    if (b.char_param) AsCharacter(&a);
  }
  if (n.op() == Op::POW)  // right-associative; its exponent is a unary expression
    return {Wrap(a, a.prec < kPrimary) + "^" + Wrap(b, b.prec < kUnary), kPower};
  // Left-associative: an equal operator on the right needs parentheses.
  return {Wrap(a, a.prec < prec) + " " + Spelling(n.op()) + " " + Wrap(b, b.prec <= prec), prec};
}

}  // namespace

std::string ExprText(const wire::FunctionInterface &iface, const wire::Expr &expr) {
  int pos = 0;
  Printed p = Print(iface, expr, &pos, 0);
  return pos == expr.nodes_size() ? p.text : p.text + " ?";
}

std::string Signature(const wire::FunctionInterface &iface) {
  std::string s = iface.name() + "(";
  for (int i = 0; i < iface.params_size(); ++i) {
    const wire::Param &p = iface.params(i);
    if (i) s += ", ";
    s += std::string(ModeName(p.mode())) + " " + TypeName(p.type()) + " ";
    s += p.pointer() ? "*" + p.name() : p.name();
    // The extents as the IDL wrote them, so that "INOUT double a[n][lda]"
    // tells a caller what to pass, where "a[][]" told them nothing.
    if (!p.pointer())
      for (const wire::Expr &d : p.dims()) s += "[" + ExprText(iface, d) + "]";
  }
  return s + ")";
}

}  // namespace ninf
