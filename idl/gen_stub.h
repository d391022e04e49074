// AST -> the C source of one Ninf executable (NAME_stub.c), written against
// stubs/runtime/ninf_stub.h. The file holds, in order: the module's Globals,
// a prototype of the called routine (for Calls), `static void
// ninf_invoke(void **args)` that calls it or runs the `{ C body }`, the
// serialized interface, and a main() that hands both to ninf_stub_main().
//
// User code (Globals, bodies) is preceded by `#line` directives naming the
// IDL file, so the C compiler reports errors in it at their IDL lines.
#pragma once

#include <string>

#include "idl/ast.h"
#include "ninf.pb.h"

namespace ninf::idl {

// `d` must have passed CheckFile; `iface` is BuildInterface(file, d);
// `stub_path` is the path the source is saved under, as a compiler will be
// given it (for the `#line` directives after user code).
std::string GenerateStub(const IdlFile &file, const Define &d, const wire::FunctionInterface &iface,
                         const std::string &stub_path);

// The C spelling of an IDL type ("float _Complex" for scomplex, "char" for
// the characters of a string).
const char *CType(Type type);

// The linker symbol of a Fortran routine as gfortran names it: lower case
// with a trailing underscore ("DGESV" -> "dgesv_").
std::string FortranSymbol(const std::string &name);

}  // namespace ninf::idl
