// AST -> ninf.wire.FunctionInterface: the description ninfd serves to
// clients and embeds in each executable. Expressions become prefix-order
// node lists whose PARAM nodes hold the parameter's 0-based index.
#pragma once

#include "idl/ast.h"
#include "ninf.pb.h"

namespace ninf::idl {

// `d` must have passed CheckFile (every name in it is a parameter).
wire::FunctionInterface BuildInterface(const IdlFile &file, const Define &d);

// Appends `e` to `out` in prefix order.
void AppendExpr(const Define &d, const Expr &e, wire::Expr *out);

}  // namespace ninf::idl
