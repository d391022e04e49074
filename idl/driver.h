// The ninf-gen pipeline: cpp -> lexer/parser -> checks -> generators, and
// writing the results. main.cc and the tests both go through here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "idl/ast.h"
#include "idl/diagnostics.h"
#include "idl/lexer.h"
#include "ninf.pb.h"
#include "protocol/status.h"

namespace ninf::idl {

struct GenOptions {
  std::string input;                      // the IDL file
  std::string outdir;                     // where the stubs will be written ("" = .)
  std::vector<std::string> include_dirs;  // -I
  std::vector<std::string> defines;       // -D name[=value]
  std::string cpp = "cpp";                // the preprocessor program
  bool verbose = false;                   // print the cpp command
};

// What one Define produces.
struct Output {
  std::string name;       // the Define's name, also the executable's
  std::string stub_file;  // NAME_stub.c
  std::string stub_source;
  std::string interface_file;  // NAME.interface
  std::string interface_text;  // protobuf text format
  wire::FunctionInterface iface;
};

struct Compilation {
  IdlFile file;
  std::vector<Output> outputs;  // in Define order
};

// Runs cpp on options.input and compiles its output. False when anything
// failed; the reasons are in `diag`.
bool CompileFile(const GenOptions &options, Diagnostics *diag, Compilation *out);

// Compiles already preprocessed text (or plain IDL without directives)
// whose first line belongs to `path`. The stubs' `#line` directives name
// them as `outdir`/NAME_stub.c, the path a compiler will be given.
// `originals` as for Lexer.
bool CompileText(std::string_view text, const std::string &path, const std::string &outdir,
                 Diagnostics *diag, Compilation *out, SourceLines *originals = nullptr);

// The output file names, in Define order: NAME_stub.c then NAME.interface.
std::vector<std::string> OutputNames(const Compilation &c);

// Writes every output into `dir`, creating it if needed.
Status WriteOutputs(const Compilation &c, const std::string &dir);

// Writes what a client includes (gen_client.h): the C header to `header`
// and the Fortran module's source to `fortran`, each unless its path is
// empty. False, with the reasons in `diag`, when either cannot be made.
bool WriteClientOutputs(const Compilation &c, const std::string &header, const std::string &fortran,
                        Diagnostics *diag);

// Writes a Makefile-style dependency file: the first output (in `dir`)
// depends on every file cpp read, so a build system reruns ninf-gen when an
// included header changes.
Status WriteDepfile(const Compilation &c, const std::string &dir, const std::string &path);

}  // namespace ninf::idl
