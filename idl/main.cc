// ninf-gen: the Ninf IDL compiler. Options in, pipeline (driver.h) out.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "idl/driver.h"
#include "idl/install.h"

namespace {

constexpr const char *kFooter = R"(Outputs, for each `Define NAME` of FILE:
  OUTDIR/NAME_stub.c     the C source of the executable (links the ninf-stub runtime)
  OUTDIR/NAME.interface  the interface ninfd serves, in protobuf text format

FILE goes through cpp first (with the -I and -D options); diagnostics read
`file:line:col: error: message`, and the exit status is 1 if there were any.

--install REGISTRY_DIR registers a library: it generates (into -o OUTDIR, or a
temporary folder), then compiles each stub into the executable REGISTRY_DIR/NAME
and copies NAME.interface next to it. The compiler is $CC or cc ($MPICC or
mpicc for Backend "MPI"), with the IDL's CompileOptions, the Define's Required
(relative paths resolve against FILE's folder), the Library flags and
`pkg-config --cflags --libs ninf-stub`, found in PKG_CONFIG_PATH, then in
ninf-gen's own prefix (or build tree). -v prints every command.

--header FILE.h and --fortran FILE.f90 write, instead of the stubs, what a
client program includes to call FILE's functions with typed arguments:
ninf_NAME(args) and ninf_NAME_async(args) for every Define, as C functions
over Ninf_call and as a Fortran module (ninf_MODULE) over module ninf's, so
that the compiler checks the arguments as it checks a local call.

Examples: ninf-gen --install /usr/local/libexec/ninf/registry -v linpack.idl
          ninf-gen --header ninf_linpack.h --fortran ninf_linpack.f90 linpack.idl)";

struct Cli {
  ninf::idl::GenOptions gen;
  std::string outdir;
  std::string install_dir;
  std::string depfile;
  std::string header;   // --header: the client's C header
  std::string fortran;  // --fortran: the client's Fortran module
  bool list_outputs = false;
};

// A fresh folder for --install without -o, removed afterwards.
std::string MakeTempDir() {
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ninf-gen.XXXXXX";
  return mkdtemp(pattern.data()) ? pattern : std::string();
}

int RunInstall(const Cli &cli, const std::string &build_dir, bool temporary,
               const ninf::idl::Compilation &c) {
  ninf::Status st = ninf::idl::WriteOutputs(c, build_dir);
  if (st.ok())
    st = ninf::idl::Install(c, {cli.install_dir, build_dir, cli.gen.input, cli.gen.verbose});
  if (temporary) {
    std::error_code ec;
    std::filesystem::remove_all(build_dir, ec);
  }
  if (!st.ok()) {
    std::cerr << "ninf-gen: error: " << st.message() << "\n";
    return 1;
  }
  return 0;
}

// The command line into `cli`.
void AddOptions(CLI::App &app, Cli &cli) {
  app.footer(kFooter);
  app.add_option("FILE", cli.gen.input, "the IDL file")->required()->check(CLI::ExistingFile);
  app.add_option("-o,--output-dir", cli.outdir, "where to write the outputs (default: .)");
  app.add_option("-I", cli.gen.include_dirs, "add DIR to cpp's include path")->type_name("DIR");
  app.add_option("-D", cli.gen.defines, "define a cpp macro")->type_name("NAME[=VALUE]");
  app.add_option("--cpp", cli.gen.cpp, "the C preprocessor to run")->capture_default_str();
  app.add_flag("--list-outputs", cli.list_outputs,
               "print the names of the files FILE produces, one per line, and write nothing");
  app.add_option("--install", cli.install_dir,
                 "compile every Define into REGISTRY_DIR/NAME and install NAME.interface")
      ->type_name("REGISTRY_DIR");
  app.add_option("--depfile", cli.depfile,
                 "also write a Makefile dependency file: the first output depends on FILE and "
                 "everything it includes")
      ->type_name("PATH");
  app.add_option("--header", cli.header,
                 "write the C header of typed calls (ninf_NAME) instead of the stubs")
      ->type_name("FILE.h");
  app.add_option("--fortran", cli.fortran,
                 "write the Fortran module of typed calls (ninf_NAME) instead of the stubs")
      ->type_name("FILE.f90");
  app.add_flag("-v,--verbose", cli.gen.verbose, "print the commands ninf-gen runs");
  app.set_version_flag("--version", "ninf-gen 0.1.0");
}

// Writes what the options ask for, from a compilation without errors:
// the client's files (--header, --fortran), the registered executables
// (--install), or else the stubs.
int WriteResults(const Cli &cli, bool temporary, const ninf::idl::Compilation &c) {
  bool client = !cli.header.empty() || !cli.fortran.empty();
  ninf::idl::Diagnostics diag;
  if (client && !ninf::idl::WriteClientOutputs(c, cli.header, cli.fortran, &diag)) {
    diag.Print(std::cerr);
    return 1;
  }
  if (!cli.install_dir.empty()) return RunInstall(cli, cli.gen.outdir, temporary, c);
  if (client) return 0;
  std::string outdir = cli.outdir.empty() ? "." : cli.outdir;
  ninf::Status st = ninf::idl::WriteOutputs(c, outdir);
  if (st.ok() && !cli.depfile.empty()) st = ninf::idl::WriteDepfile(c, outdir, cli.depfile);
  if (!st.ok()) {
    std::cerr << "ninf-gen: error: " << st.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  Cli cli;
  CLI::App app{"ninf-gen: compiles a Ninf IDL file into executable stubs and interfaces."};
  AddOptions(app, cli);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  // --install without -o builds in a temporary folder; the stubs must know
  // their folder before they are generated (for #line).
  bool temporary = !cli.install_dir.empty() && cli.outdir.empty() && !cli.list_outputs;
  cli.gen.outdir = cli.outdir;
  if (temporary && (cli.gen.outdir = MakeTempDir()).empty()) {
    std::cerr << "ninf-gen: error: cannot create a temporary folder\n";
    return 1;
  }
  ninf::idl::Diagnostics diag;
  ninf::idl::Compilation c;
  bool compiled = ninf::idl::CompileFile(cli.gen, &diag, &c);
  if (!compiled) {
    diag.Print(std::cerr);
    std::error_code ec;
    if (temporary) std::filesystem::remove(cli.gen.outdir, ec);
    return 1;
  }
  if (cli.list_outputs) {
    for (const std::string &name : ninf::idl::OutputNames(c))
      std::cout << (cli.outdir.empty() ? name : (std::filesystem::path(cli.outdir) / name).string())
                << "\n";
    return 0;
  }
  return WriteResults(cli, temporary, c);
}
