#include "idl/gen_interface.h"

#include "idl/checks.h"

namespace ninf::idl {
namespace {

using Node = wire::ExprNode;

Node::Op WireOp(ExprOp op) {
  switch (op) {
    case ExprOp::kConst:
      return Node::CONST;
    case ExprOp::kName:
      return Node::PARAM;
    case ExprOp::kNeg:
      return Node::NEG;
    case ExprOp::kNot:
      return Node::NOT;
    case ExprOp::kAdd:
      return Node::ADD;
    case ExprOp::kSub:
      return Node::SUB;
    case ExprOp::kMul:
      return Node::MUL;
    case ExprOp::kDiv:
      return Node::DIV;
    case ExprOp::kMod:
      return Node::MOD;
    case ExprOp::kPow:
      return Node::POW;
    case ExprOp::kLt:
      return Node::LT;
    case ExprOp::kLe:
      return Node::LE;
    case ExprOp::kGt:
      return Node::GT;
    case ExprOp::kGe:
      return Node::GE;
    case ExprOp::kEq:
      return Node::EQ;
    case ExprOp::kNe:
      return Node::NE;
    case ExprOp::kAnd:
      return Node::AND;
    case ExprOp::kOr:
      return Node::OR;
    case ExprOp::kCond:
      return Node::COND;
  }
  return Node::CONST;
}

wire::Mode WireMode(Mode mode) {
  switch (mode) {
    case Mode::kIn:
      return wire::MODE_IN;
    case Mode::kOut:
      return wire::MODE_OUT;
    case Mode::kInout:
      return wire::MODE_INOUT;
    case Mode::kWork:
      return wire::MODE_WORK;
  }
  return wire::MODE_IN;
}

// Equal by construction: both come from NINF_TYPE_MAP (protocol/types.cc).
wire::Type WireType(Type type) { return static_cast<wire::Type>(type); }

void AddConstOne(wire::Param *p) {
  p->add_dims()->add_nodes()->set_value(1);  // op CONST is the default
}

}  // namespace

void AppendExpr(const Define &d, const Expr &e, wire::Expr *out) {
  Node *node = out->add_nodes();
  node->set_op(WireOp(e.op));
  if (e.op == ExprOp::kConst) node->set_value(e.value);
  if (e.op == ExprOp::kName) node->set_value(FindParam(d, e.name));
  for (const Expr &operand : e.operands) AppendExpr(d, operand, out);
}

wire::FunctionInterface BuildInterface(const IdlFile &file, const Define &d) {
  wire::FunctionInterface iface;
  iface.set_name(d.name);
  iface.set_module(file.module);
  iface.set_description(d.description.value);
  for (const Param &p : d.params) {
    wire::Param *wp = iface.add_params();
    wp->set_name(p.name);
    wp->set_mode(WireMode(p.mode));
    wp->set_type(WireType(p.type));
    wp->set_pointer(p.pointer);
    // A pointer is one element; `a[]` as a C parameter is a pointer too.
    if (p.pointer) AddConstOne(wp);
    for (const Dim &dim : p.dims) {
      if (dim.omitted)
        AddConstOne(wp);
      else
        AppendExpr(d, dim.expr, wp->add_dims());
    }
  }
  if (d.has_calc_order) AppendExpr(d, d.calc_order, iface.mutable_calc_order());
  iface.set_language(IsFortran(d) ? wire::FunctionInterface::LANG_FORTRAN
                                  : wire::FunctionInterface::LANG_C);
  if (!d.backend.value.empty()) iface.set_backend("MPI");  // the only one CheckFile accepts
  if (ForbidsReuse(d)) iface.set_no_reuse(true);
  if (RootOnly(d)) iface.set_distribute("root");
  return iface;
}

}  // namespace ninf::idl
