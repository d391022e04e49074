// Running the external programs ninf-gen relies on (cpp, the C compiler,
// pkg-config), and the word splitting their flags need.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "protocol/status.h"

namespace ninf::idl {

// Runs argv[0] (searched in PATH) and waits for it. Its exit status goes to
// *exit_code (128 + the signal number if a signal killed it). With
// `captured`, its standard output is collected there; standard error is
// inherited so that the program's own messages reach the user, unless
// `with_stderr` (which needs `captured`) collects it too, interleaved as
// the program wrote it: the caller must then show it (ninf-gen reads the
// linker's messages to explain them).
// Errors: the program could not be started (NINF_ERR_NOT_SUPPORTED) or a
// system call failed (NINF_ERR_INTERNAL); a non-zero exit is not an error.
Status RunProgram(const std::vector<std::string> &argv, std::string *captured, int *exit_code,
                  bool with_stderr = false);

// Splits flags the way a POSIX shell splits words, without expansions:
// blanks separate words, '...' and "..." quote, a backslash escapes.
std::vector<std::string> SplitWords(std::string_view text);

// argv as a shell command line, quoting words that need it (for -v).
std::string CommandLine(const std::vector<std::string> &argv);

}  // namespace ninf::idl
