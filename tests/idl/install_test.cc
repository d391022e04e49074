// Install helpers and running programs: word splitting, command lines,
// Required paths, the compiler command.
#include "idl/install.h"

#include <catch2/catch.hpp>
#include <cstdlib>

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
