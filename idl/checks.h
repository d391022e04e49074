// Semantic checks on a parsed IDL file: the rules of the reference Ninf
// compiler. Every problem is reported (`file:line:col: error: ...`); the
// generators may only run when none was found.
//
// Rules:
//  - OUT, INOUT and WORK parameters must be arrays or pointers;
//  - `string` only as an IN scalar;
//  - dimensions and CalcOrder may only name IN scalar parameters of integer
//    type (char, short, int, long);
//  - no unknown identifiers (expressions, Calls arguments), no duplicate
//    parameters or Defines, no C keywords as names;
//  - Calls languages "C" or "Fortran", Backend "" or "MPI", Reuse "yes" or
//    "no"; Distribute "broadcast" or "root", and the Calls argument MPI_COMM
//    (the communicator), only with Backend "MPI".
#pragma once

#include <string_view>

#include "idl/ast.h"
#include "idl/diagnostics.h"

namespace ninf::idl {

void CheckFile(const IdlFile &file, Diagnostics *diag);

// Index of the parameter called `name` in `d`, or -1.
int FindParam(const Define &d, std::string_view name);

// True for a scalar passed by value: no dimensions, not a pointer.
bool IsScalar(const Param &p);

// True for an IN scalar of type char, short, int or long: the parameters
// that dimension and CalcOrder expressions may use.
bool IsSizeParam(const Param &p);

// "Fortran" in any letter case; otherwise the routine is C.
bool IsFortran(const Define &d);

// `Reuse "no"` in any letter case: every call gets a process of its own.
bool ForbidsReuse(const Define &d);
// Backend "MPI" (the only backend CheckFile accepts).
bool IsMpi(const Define &d);
// Distribute "root": the arrays reach rank 0 only.
bool RootOnly(const Define &d);

}  // namespace ninf::idl
