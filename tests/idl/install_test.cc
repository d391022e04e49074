// Install helpers and running programs: word splitting, command lines,
// Required paths, the compiler command.
#include "idl/install.h"

#include <catch2/catch.hpp>
#include <cstdlib>

#include "idl/link_errors.h"
#include "idl/process.h"
#include "tests/idl/idl_test_util.h"

using namespace ninf::idl;
using ninf::idl::testing::Compile;

TEST_CASE("install_split_words_like_a_shell", "[idl][install]") {
  CHECK(SplitWords("") == std::vector<std::string>{});
  CHECK(SplitWords("  -O2\t-lm \n") == std::vector<std::string>{"-O2", "-lm"});
  CHECK(SplitWords(R"(-DX="a b" 'c d' e\ f "q\"x")") ==
        std::vector<std::string>{"-DX=a b", "c d", "e f", "q\"x"});
}

TEST_CASE("install_command_line_quotes_when_needed", "[idl][install]") {
  CHECK(CommandLine({"cc", "-o", "a b", "it's", "-DX=1"}) == "cc -o 'a b' 'it'\\''s' -DX=1");
}

TEST_CASE("install_required_paths_resolve_against_the_idl_folder", "[idl][install]") {
  CHECK(
      ResolveRequired("lib/x.o -L../lib -lfoo /abs/y.o ./z.c", "src/idl") ==
      std::vector<std::string>{"src/idl/lib/x.o", "-L../lib", "-lfoo", "/abs/y.o", "src/idl/z.c"});
  CHECK(ResolveRequired("x.o", "") == std::vector<std::string>{"x.o"});
}

TEST_CASE("install_compile_command", "[idl][install]") {
  Compilation c;
  REQUIRE(Compile("CompileOptions \"-O3 -fopenmp\";\nLibrary \"-lopenblas\";\nLibrary \"-lm\";\n"
                  "Define f(IN int n) Required \"f.o\" Calls \"C\" f(n);\n"
                  "Define g(IN int n) Backend \"MPI\" Calls \"C\" g(n);",
                  &c) == "");
  setenv("CC", "ccache gcc", 1);
  setenv("MPICC", "my-mpicc", 1);
  CHECK(
      CompileCommand(c, c.file.defines[0], "b/f_stub.c", "r/.f", "idl", {"-I/x", "-lninf_stub"}) ==
      std::vector<std::string>{"ccache", "gcc", "-O3", "-fopenmp", "-o", "r/.f", "b/f_stub.c",
                               "idl/f.o", "-lopenblas", "-lm", "-I/x", "-lninf_stub"});
  CHECK(CompileCommand(c, c.file.defines[1], "g.c", "g", "", {})[0] == "my-mpicc");
  unsetenv("CC");
  unsetenv("MPICC");
  CHECK(CompileCommand(c, c.file.defines[0], "f.c", "f", "", {})[0] == "cc");
  CHECK(CompileCommand(c, c.file.defines[1], "g.c", "g", "", {})[0] == "mpicc");
}

TEST_CASE("install_run_program", "[idl][install]") {
  std::string out;
  int code = -1;
  REQUIRE(RunProgram({"sh", "-c", "echo hello; exit 3"}, &out, &code).ok());
  CHECK(out == "hello\n");
  CHECK(code == 3);
  REQUIRE(RunProgram({"sh", "-c", "kill -TERM $$"}, nullptr, &code).ok());
  CHECK(code == 128 + 15);
  ninf::Status st = RunProgram({"/nonexistent/ninf-no-such-program"}, &out, &code);
  CHECK_FALSE(st.ok());
  CHECK(st.message().find("cannot run '/nonexistent/ninf-no-such-program'") == 0);
}

TEST_CASE("install_run_program_collects_stderr_when_asked", "[idl][install]") {
  std::string out;
  int code = -1;
  REQUIRE(RunProgram({"sh", "-c", "echo one; echo two >&2; exit 1"}, &out, &code, true).ok());
  CHECK(out == "one\ntwo\n");
  CHECK(code == 1);
  // Past 1 MiB the messages are counted, not kept, and the program is
  // never blocked on a full pipe.
  out.clear();
  REQUIRE(RunProgram({"sh", "-c", "head -c 1100000 /dev/zero >&2"}, &out, &code, true).ok());
  CHECK(code == 0);
  CHECK(out.size() < (std::size_t{1} << 20) + 100);
  CHECK_THAT(out, Catch::EndsWith("\n[51424 more bytes of output not shown]\n"));
}

// The linker's report, in GNU ld's C-locale and UTF-8 quotes, gold's and
// lld's forms (issue 31: "undefined reference to 'dsyev_'" named neither
// the Define nor the fix).
TEST_CASE("install_undefined_symbols_from_linker_output", "[idl][install]") {
  const std::string gnu =
      "/usr/bin/ld: /tmp/ccX.o: in function `invoke':\n"
      "dsyev_stub.c:(.text+0x45): undefined reference to `dsyev_'\n"
      "/usr/bin/ld: dsyev_stub.c:(.text+0x60): undefined reference to `dsyev_'\n"
      "/usr/bin/ld: x.o: undefined reference to \xE2\x80\x98"
      "dgemm_\xE2\x80\x99\n"
      "collect2: error: ld returned 1 exit status\n";
  CHECK(UndefinedSymbols(gnu) == std::vector<std::string>{"dsyev_", "dgemm_"});
  CHECK(OnlyUndefinedSymbols(gnu));
  CHECK(UndefinedSymbols("x.c:(.text): error: undefined reference to 'cblas_dgemm'\n") ==
        std::vector<std::string>{"cblas_dgemm"});
  // A library needed but not named: the version is not part of the name,
  // and ld's "DSO missing" line is shown as it is.
  const std::string dso =
      "/usr/bin/ld: /tmp/cc.o: undefined reference to symbol 'sqrt@@GLIBC_2.2.5'\n"
      "/usr/bin/ld: /lib/x86_64-linux-gnu/libm.so.6: error adding symbols: DSO missing from "
      "command line\n"
      "collect2: error: ld returned 1 exit status\n";
  CHECK(UndefinedSymbols(dso) == std::vector<std::string>{"sqrt"});
  CHECK_FALSE(OnlyUndefinedSymbols(dso));
  const std::string lld =
      "ld.lld: error: undefined symbol: dgesv_\n"
      ">>> referenced by dgesv_stub.c\n"
      ">>>               /tmp/dgesv_stub-1.o:(invoke)\n"
      "cc: error: linker command failed with exit code 1 (use -v to see invocation)\n";
  CHECK(UndefinedSymbols(lld) == std::vector<std::string>{"dgesv_"});
  CHECK_FALSE(OnlyUndefinedSymbols(lld));  // the driver's own line is shown as it is
  // A compile error is not a link error, and is always shown.
  const std::string compile = "bad.idl:3:14: error: 'undeclared_name' undeclared\n";
  CHECK(UndefinedSymbols(compile).empty());
  CHECK_FALSE(OnlyUndefinedSymbols(compile + gnu));
  std::string many;
  for (int i = 0; i < 20; ++i) many += "undefined reference to `f" + std::to_string(i) + "'\n";
  CHECK(UndefinedSymbols(many).size() == 8);
}

TEST_CASE("install_suggests_the_library_of_a_symbol", "[idl][install]") {
  CHECK(SuggestLibrary("dsyev_") == "Library \"-llapack\"; (LAPACK; or \"-lopenblas\")");
  CHECK(SuggestLibrary("zheevd_") == "Library \"-llapack\"; (LAPACK; or \"-lopenblas\")");
  CHECK(SuggestLibrary("dgemm_") == "Library \"-lblas\"; (BLAS; or \"-lopenblas\")");
  CHECK(SuggestLibrary("idamax_") == "Library \"-lblas\"; (BLAS; or \"-lopenblas\")");
  CHECK(SuggestLibrary("dznrm2_") == "Library \"-lblas\"; (BLAS; or \"-lopenblas\")");
  CHECK(SuggestLibrary("LAPACKE_dsyev") == "Library \"-llapacke -llapack\"; (LAPACKE)");
  CHECK(SuggestLibrary("cblas_dgemm") == "Library \"-lcblas\"; (CBLAS; or \"-lopenblas\")");
  CHECK(SuggestLibrary("_gfortran_st_write") ==
        "Library \"-lgfortran\"; (the GNU Fortran runtime)");
  CHECK(SuggestLibrary("sqrt") == "Library \"-lm\"; (the C math library)");
  CHECK(SuggestLibrary("my_solver") == "");
  CHECK(SuggestLibrary("mysolver_") == "");  // not LAPACK-shaped
}

TEST_CASE("install_link_error_names_the_function_symbol_and_fix", "[idl][install]") {
  Compilation c;
  REQUIRE(Compile("Define dsyev(IN string jobz, IN int n, INOUT double a[n][n], OUT double w[n],\n"
                  "             OUT int *info)\n"
                  "  Calls \"Fortran\" dsyev(jobz, n, a, w, info);\n"
                  "Define mine(IN int n) Calls \"C\" my_solver(n);\n",
                  &c) == "");
  REQUIRE(c.file.defines.size() == 2);
  CHECK(LinkErrorMessage(c.file.defines[0], {"dsyev_"}) ==
        "cannot link dsyev: no library given defines 'dsyev_', the Fortran routine its Calls "
        "names: add the library that does to the IDL file, e.g. Library \"-llapack\"; (LAPACK; "
        "or \"-lopenblas\").");
  CHECK(LinkErrorMessage(c.file.defines[0], {"dsyev_", "dgemm_"}) ==
        "cannot link dsyev: no library given defines 'dsyev_', the Fortran routine its Calls "
        "names: add the library that does to the IDL file, e.g. Library \"-llapack\"; (LAPACK; "
        "or \"-lopenblas\"). No library given defines 'dgemm_', which the code it links needs: "
        "add the library that does to the IDL file, e.g. Library \"-lblas\"; (BLAS; or "
        "\"-lopenblas\").");
  CHECK(LinkErrorMessage(c.file.defines[1], {"my_solver"}) ==
        "cannot link mine: no library given defines 'my_solver', the C routine its Calls names: "
        "add the library that does to the IDL file (Library \"-lNAME\";) or its source "
        "(Required \"FILE\").");
}

TEST_CASE("install_summary_says_what_and_how_to_serve", "[idl][install]") {
  CHECK(InstallSummary({"dsyev"}, "/srv/ninf", false) ==
        "installed dsyev: /srv/ninf/dsyev and /srv/ninf/dsyev.interface\n"
        "To serve it: a running ninfd whose registry lists /srv/ninf serves it after "
        "`kill -HUP <pid of ninfd>` (or `systemctl reload ninfd`); otherwise start ninfd with "
        "`ninfd --registry stdlib --registry /srv/ninf` (or NINF_REGISTRY=stdlib:/srv/ninf). "
        "`ninfd --list` then shows it.\n");
  CHECK(InstallSummary({"a", "b"}, "/opt/my reg", false) ==
        "installed a: /opt/my reg/a and /opt/my reg/a.interface\n"
        "installed b: /opt/my reg/b and /opt/my reg/b.interface\n"
        "To serve them: a running ninfd whose registry lists /opt/my reg serves them after "
        "`kill -HUP <pid of ninfd>` (or `systemctl reload ninfd`); otherwise start ninfd with "
        "`ninfd --registry stdlib --registry '/opt/my reg'` (or "
        "NINF_REGISTRY='stdlib:/opt/my reg'). `ninfd --list` then shows them.\n");
  CHECK_THAT(InstallSummary({"x"}, "/a:b", false),
             !Catch::Contains("NINF_REGISTRY") && Catch::Contains("--registry /a:b`"));
  CHECK(InstallSummary({"x"}, "/usr/libexec/ninf/registry", true) ==
        "installed x: /usr/libexec/ninf/registry/x and /usr/libexec/ninf/registry/x.interface\n"
        "To serve it: this is the standard library's folder; a running ninfd serves it after "
        "`kill -HUP <pid of ninfd>` (or `systemctl reload ninfd`). `ninfd --list` then shows "
        "it.\n");
}
