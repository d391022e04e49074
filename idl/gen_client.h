// Compilation -> what a client program includes to call the module's
// Defines with typed arguments, so that its compiler checks their count and
// types as it checks a call of the local routine (docs/client.md, "Typed
// calls"):
//  - a C header: per Define, `static inline int ninf_NAME(...)` over
//    Ninf_call and `ninf_NAME_async(...)` over Ninf_call_async, whose
//    prototypes also convert scalars (1 where a double goes is 1.0);
//  - a Fortran module `ninf_MODULE` (see FortranModuleName): the same two as module functions over
//    module ninf's Ninf_call, with typed dummies. Arrays are assumed-rank,
//    so that the library's run-time checks (rank, contiguity, size) still
//    see the caller's own arrays.
#pragma once

#include <string>

#include "idl/diagnostics.h"
#include "idl/driver.h"

namespace ninf::idl {

// The C header. `c` compiled without errors.
std::string GenerateClientHeader(const Compilation &c);

// The Fortran module's source. False, with the reasons in `diag`, when a
// Define cannot be spelled in Fortran: two Define names that differ only in
// letter case, a name too long for Fortran (63 characters), more arguments
// than module ninf's Ninf_call takes (30).
bool GenerateFortranModule(const Compilation &c, Diagnostics *diag, std::string *out);

// The Fortran module's name: "ninf_" and the IDL module's name, with every
// character Fortran does not allow in a name replaced by '_'; and "_calls"
// after it when a Define has the module's name (the standard library's
// `ep`), since a module cannot hold a function named as itself.
std::string FortranModuleName(const IdlFile &file);

}  // namespace ninf::idl
