// `ninf-gen --install`: registering a library. Compiles and links each
// generated stub into REGISTRY_DIR/NAME and puts NAME.interface next to it,
// which is all ninfd needs to serve the routine.
//
// Compiler: $CC or `cc` ($MPICC or `mpicc` for Backend "MPI"). Command:
//   CC <CompileOptions> -o REGISTRY/NAME BUILD/NAME_stub.c <Required>
//      <Library> $(pkg-config --cflags --libs ninf-stub)
// Relative paths in Required resolve against the IDL file's folder. Both
// files are written under temporary names and renamed into place, so a
// daemon never sees half a file and a running executable can be replaced.
#pragma once

#include <string>
#include <vector>

#include "idl/driver.h"
#include "protocol/status.h"

namespace ninf::idl {

struct InstallOptions {
  std::string registry_dir;
  std::string build_dir;  // where WriteOutputs put the generated sources
  std::string idl_path;   // the IDL file, for resolving Required paths
  bool verbose = false;   // print each command and each installed file
};

// Installs every Define, in order, up to the first failure; then prints
// InstallSummary of those installed on standard output.
Status Install(const Compilation &c, const InstallOptions &options);

// What `--install` prints on success: one line per function with its two
// files, then how a ninfd comes to serve them (SIGHUP when `registry_dir`
// is among its folders, else the registry setting that adds it).
// `standard_library`: `registry_dir` is this installation's own registry.
std::string InstallSummary(const std::vector<std::string> &names, const std::string &registry_dir,
                           bool standard_library);

// The Required words with relative file paths made relative to `idl_dir`
// instead (words starting with '-' are left alone).
std::vector<std::string> ResolveRequired(const std::string &required, const std::string &idl_dir);

// The compiler command for one Define, without running it.
std::vector<std::string> CompileCommand(const Compilation &c, const Define &d,
                                        const std::string &source, const std::string &exe,
                                        const std::string &idl_dir,
                                        const std::vector<std::string> &runtime_flags);

}  // namespace ninf::idl
