// What a failed link means, in the IDL's terms. `ninf-gen --install` runs
// the C compiler, which links; a routine no library defines then surfaces
// as the linker's "undefined reference to `dsyev_'", which names neither
// the Define nor the fix. These pure functions read the compiler's output
// and say both: the function, the missing symbol, and the `Library` line
// to add (issue 31).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "idl/ast.h"

namespace ninf::idl {

// The symbols the linker reported as undefined, in first-seen order,
// without repeats: GNU ld and gold ("undefined reference to `x'", with
// ASCII or UTF-8 quotes) and lld ("undefined symbol: x"). At most
// `limit` of them.
std::vector<std::string> UndefinedSymbols(std::string_view output, std::size_t limit = 8);

// The `Library` line that most likely defines `symbol`, with what it is
// ("Library \"-llapack\"; (LAPACK)"), or "" when the name says nothing.
std::string SuggestLibrary(std::string_view symbol);

// The message for Define `d` whose link left `symbols` undefined, one
// sentence per symbol, e.g.
//   cannot link dsyev: no library given defines 'dsyev_', the Fortran
//   routine its Calls names: add the library that does to the IDL file,
//   e.g. Library "-llapack"; (LAPACK)
std::string LinkErrorMessage(const Define &d, const std::vector<std::string> &symbols);

// Whether every non-empty line of `output` is part of the linker's
// undefined-symbol report (nothing else the user must see): then
// LinkErrorMessage says all of it and the raw text is shown only with -v.
bool OnlyUndefinedSymbols(std::string_view output);

}  // namespace ninf::idl
