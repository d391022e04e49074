// Generators: the interface fields, and the stub's C text (prototypes,
// casts, locals, #line bookkeeping, embedded interface bytes).
#include <catch2/catch.hpp>
#include <sstream>

#include "idl/gen_client.h"
#include "idl/gen_stub.h"
#include "tests/idl/idl_test_util.h"

using ninf::idl::Compilation;
using ninf::idl::testing::Compile;
namespace wire = ninf::wire;

namespace {

Compilation Gen(const std::string &text) {
  Compilation c;
  std::string errors = Compile(text, &c);
  INFO(errors);
  REQUIRE(errors.empty());
  return c;
}

bool Contains(const std::string &haystack, const std::string &needle) {
  INFO("looking for: " << needle);
  return haystack.find(needle) != std::string::npos;
}

// The bytes of `static const unsigned char ninf_interface[]` in a stub.
std::string EmbeddedBytes(const std::string &source) {
  std::size_t start = source.find("ninf_interface[] = {");
  std::size_t end = source.find("};", start);
  std::string bytes;
  std::istringstream in(source.substr(start + 20, end - start - 20));
  std::string word;
  while (in >> word) bytes += static_cast<char>(std::stoi(word, nullptr, 16));
  return bytes;
}

}  // namespace

TEST_CASE("gen_interface_fields", "[idl][gen]") {
  Compilation c =
      Gen("Define f(IN int n, OUT int *info, INOUT double a[][n], WORK scomplex w[n+1])\n"
          "  \"desc\" Backend \"mpi\" CalcOrder n\n  Calls \"Fortran\" f(n, info, a, w);");
  const wire::FunctionInterface &i = c.outputs.at(0).iface;
  CHECK(i.name() == "f");
  CHECK(i.module() == "t");  // no Module statement: named after the file
  CHECK(i.description() == "desc");
  CHECK(i.language() == wire::FunctionInterface::LANG_FORTRAN);
  CHECK(i.backend() == "MPI");
  REQUIRE(i.params_size() == 4);
  CHECK(i.params(0).dims_size() == 0);
  CHECK(i.params(1).mode() == wire::MODE_OUT);
  CHECK(i.params(1).pointer());
  REQUIRE(i.params(1).dims_size() == 1);
  CHECK(i.params(1).dims(0).nodes(0).op() == wire::ExprNode::CONST);
  CHECK(i.params(1).dims(0).nodes(0).value() == 1);
  REQUIRE(i.params(2).dims_size() == 2);
  CHECK(i.params(2).dims(0).nodes(0).value() == 1);
  CHECK(i.params(2).dims(1).nodes(0).op() == wire::ExprNode::PARAM);
  CHECK(i.params(2).dims(1).nodes(0).value() == 0);
  CHECK(i.params(3).mode() == wire::MODE_WORK);
  CHECK(i.params(3).type() == wire::TYPE_SCOMPLEX);
  REQUIRE(i.params(3).dims(0).nodes_size() == 3);
  CHECK(i.params(3).dims(0).nodes(0).op() == wire::ExprNode::ADD);
  CHECK(i.calc_order().nodes_size() == 1);
  CHECK(c.outputs[0].interface_text.find("language: LANG_FORTRAN") != std::string::npos);
}

TEST_CASE("gen_c_stub", "[idl][gen]") {
  Compilation c =
      Gen("Module m;\nDefine f(IN int n, IN float x, IN dcomplex z, IN string s, IN double a[n],\n"
          "         OUT int *info)\n  Calls \"C\" f(n, x, z, s, a, info, n);");
  const std::string &src = c.outputs.at(0).stub_source;
  CHECK(Contains(src,
                 "void f(int n, float x, double _Complex z, char *s, double *a, int *info, "
                 "int n_2);"));
  CHECK(Contains(src,
                 "static void ninf_invoke(void **args) {\n  f(\n"
                 "      *(int *)args[0],\n      *(float *)args[1],\n"
                 "      *(double _Complex *)args[2],\n      (char *)args[3],\n"
                 "      (double *)args[4],\n      (int *)args[5],\n      *(int *)args[0]);\n}"));
  CHECK(Contains(src,
                 "return ninf_stub_main(argc, argv, ninf_interface, sizeof ninf_interface, "
                 "ninf_invoke);"));
  wire::FunctionInterface parsed;
  REQUIRE(parsed.ParseFromString(EmbeddedBytes(src)));
  CHECK(parsed.SerializeAsString() == c.outputs[0].iface.SerializeAsString());
}

TEST_CASE("gen_fortran_stub", "[idl][gen]") {
  Compilation c =
      Gen("Define f(IN int n, IN string s, OUT double v[n]) Calls \"Fortran\" "
          "DSolve(s, n, v);\nDefine g() Calls \"Fortran\" G();");
  const std::string &src = c.outputs.at(0).stub_source;
  CHECK(Contains(src, "#include <string.h>"));
  CHECK(Contains(src, "void dsolve_(char *s, int *n, double *v, size_t s_len);"));
  CHECK(Contains(src,
                 "  dsolve_((char *)args[1], (int *)args[0], (double *)args[2], "
                 "strlen((char *)args[1]));"));
  const std::string &g = c.outputs.at(1).stub_source;
  CHECK(Contains(g, "void g_(void);"));
  CHECK(Contains(g, "  (void)args;\n  g_();"));
  CHECK_FALSE(Contains(g, "string.h"));
  CHECK(ninf::idl::FortranSymbol("DGESV") == "dgesv_");
}

TEST_CASE("gen_body_stub_and_line_directives", "[idl][gen]") {
  Compilation c =
      Gen("Globals {\n  static int twice(int v) { return 2 * v; }\n}\n"
          "Define f(IN int n, IN scomplex z, IN string s, OUT int *info, INOUT double a[n])\n"
          "{\n  *info = twice(n);\n}");
  const std::string &src = c.outputs.at(0).stub_source;
  CHECK(Contains(src, "#line 1 \"t.idl\"\n\n  static int twice(int v) { return 2 * v; }\n"));
  CHECK(Contains(src,
                 "  int n = *(int *)args[0];\n"
                 "  float _Complex z = *(float _Complex *)args[1];\n"
                 "  char *s = (char *)args[2];\n"
                 "  int *info = (int *)args[3];\n"
                 "  double *a = (double *)args[4];\n"
                 "  (void)n; (void)z; (void)s; (void)info; (void)a;\n"
                 "#line 5 \"t.idl\"\n{\n  *info = twice(n);\n}\n"));
  // Every `#line N "f_stub.c"` must name the line that follows it.
  std::istringstream in(src);
  std::string line;
  int number = 0, checked = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("#line ", 0) == 0 && line.find("f_stub.c") != std::string::npos) {
      CHECK(std::stoi(line.substr(6)) == number + 1);
      ++checked;
    }
  }
  CHECK(checked == 2);
}

TEST_CASE("gen_mpi_stub", "[idl][gen]") {
  Compilation c =
      Gen("Define f(IN int n, OUT double a[n]) Backend \"MPI\" Distribute \"root\"\n"
          "  Calls \"C\" f(MPI_COMM, n, a);\n"
          "Define g(IN int n) Backend \"MPI\" Calls \"Fortran\" g(n, MPI_COMM);");
  const std::string &src = c.outputs.at(0).stub_source;
  CHECK(Contains(src, "#include \"ninf_stub_mpi.h\""));
  CHECK(Contains(src, "void f(MPI_Comm comm, int n, double *a);"));
  CHECK(Contains(src, "f(ninf_stub_mpi_comm(), *(int *)args[0], (double *)args[1]);"));
  CHECK(Contains(src,
                 "return ninf_stub_mpi_main(argc, argv, ninf_interface, sizeof ninf_interface, "
                 "ninf_invoke);"));
  CHECK(c.outputs[0].iface.distribute() == "root");
  const std::string &fsrc = c.outputs.at(1).stub_source;
  CHECK(Contains(fsrc, "void g_(int *n, MPI_Fint *comm);"));
  CHECK(Contains(fsrc, "MPI_Fint ninf_comm = MPI_Comm_c2f(ninf_stub_mpi_comm());"));
  CHECK(Contains(fsrc, "g_((int *)args[0], &ninf_comm);"));
  CHECK(c.outputs[1].iface.distribute().empty());  // broadcast, the default
  // An ordinary Define keeps the ordinary main.
  Compilation plain = Gen("Define h(IN int n) Calls \"C\" h(n);");
  CHECK(Contains(plain.outputs.at(0).stub_source, "return ninf_stub_main(argc"));
  CHECK_FALSE(Contains(plain.outputs.at(0).stub_source, "mpi"));
}

// The typed calls' C header: each parameter as Ninf_call reads it, and both
// wrappers over it.
TEST_CASE("gen_client_header", "[idl][gen][client]") {
  Compilation c = Gen(
      "Module m;\n"
      "Define f(IN char c, IN long n, IN float x, IN string s, IN double a[n], INOUT int b[n],\n"
      "         OUT double *r, WORK double w[n], IN dcomplex z)\n"
      "  Calls \"C\" f(c, n, x, s, a, b, r, w, z);\n"
      "Define g() Calls \"C\" g();\n"
      "Define h(IN int Ninf_call) Calls \"C\" h(Ninf_call);\n");
  std::string h = ninf::idl::GenerateClientHeader(c);
  CHECK(Contains(h, "#ifndef NINF_CALLS_M_H\n#define NINF_CALLS_M_H\n"));
  CHECK(Contains(h, "#include <ninf.h>"));
  CHECK(
      Contains(h,
               "static inline int ninf_f(char c, long n, float x, const char *s, const double *a, "
               "int *b,\n"
               "                         double *r, double *w, double _Complex z) {\n"
               "  return Ninf_call(\"f\", c, n, x, s, a, b, r, w, z);\n}\n"));
  CHECK(Contains(h, "  return Ninf_call_async(\"f\", c, n, x, s, a, b, r, w, z);\n"));
  CHECK(Contains(h, "static inline int ninf_g(void) {\n  return Ninf_call(\"g\");\n}\n"));
  CHECK(Contains(h, "static inline int ninf_g_async(void) {\n"));
  // A parameter may not hide the function the wrapper calls.
  CHECK(Contains(h,
                 "static inline int ninf_h(int Ninf_call_) {\n"
                 "  return Ninf_call(\"h\", Ninf_call_);\n"));
  CHECK(Contains(h, "\n#endif\n"));
}

// The Fortran module: types, intents, assumed-rank arrays, and names
// Fortran cannot take as they are (letter case, a leading '_', the
// function's own result and the kinds it uses).
TEST_CASE("gen_client_fortran", "[idl][gen][client]") {
  Compilation c = Gen(
      "Module m;\n"
      "Define f(IN int A, IN double a[A], IN int _n, IN int ninf_status, OUT double *c_double,\n"
      "         INOUT long l[A], WORK float w[A], IN char j, IN string s, OUT short *k)\n"
      "  \"Does f.\"\n"
      "  Calls \"C\" f(A, a, _n, ninf_status, c_double, l, w, j, s, k);\n");
  ninf::idl::Diagnostics diag;
  std::string f90;
  REQUIRE(ninf::idl::GenerateFortranModule(c, &diag, &f90));
  CHECK(Contains(f90, "\nmodule ninf_m\n"));
  CHECK(Contains(f90, "  use, intrinsic :: iso_c_binding, only: c_double, c_float, c_long\n"));
  CHECK(Contains(f90, "  use ninf, only: Ninf_call, Ninf_call_async\n"));
  CHECK(Contains(f90, "  public :: ninf_f, ninf_f_async\n"));
  CHECK(Contains(f90, "  ! Does f.\n"));
  CHECK(
      Contains(f90,
               "  function ninf_f(A, a_, p_n, ninf_status_, c_double_, l, w, j, s, k) "
               "result(ninf_status)\n"
               "    integer, intent(in) :: A\n"
               "    real(c_double), intent(in) :: a_(..)\n"
               "    integer, intent(in) :: p_n\n"
               "    integer, intent(in) :: ninf_status_\n"
               "    real(c_double), intent(out) :: c_double_\n"
               "    integer(c_long), intent(inout) :: l(..)\n"
               "    real(c_float) :: w(..)\n"
               "    character(len=1), intent(in) :: j\n"
               "    character(len=*), intent(in) :: s\n"
               "    integer, intent(out) :: k\n"
               "    integer :: ninf_status\n"
               "    ninf_status = Ninf_call('f', A, a_, p_n, ninf_status_, c_double_, l, w, j, s, "
               "k)\n"
               "  end function ninf_f\n"));
  // The asynchronous one: its arrays and OUT scalars are ASYNCHRONOUS.
  CHECK(Contains(f90, "result(ninf_id)\n"));
  CHECK(Contains(f90, "    real(c_double), intent(in), asynchronous :: a_(..)\n"));
  CHECK(Contains(f90, "    integer, intent(out), asynchronous :: k\n"));
  CHECK(Contains(f90, "    integer, intent(in) :: p_n\n"));
  CHECK(Contains(f90, "end module ninf_m\n"));
}

TEST_CASE("gen_client_fortran_names", "[idl][gen][client]") {
  // A Define named as its module: the module cannot be ninf_ep as well.
  Compilation ep = Gen("Module ep;\nDefine ep(IN long m) Calls \"C\" ep(m);\n");
  CHECK(ninf::idl::FortranModuleName(ep.file) == "ninf_ep_calls");
  // A module named after a file may hold characters a Fortran name cannot.
  ninf::idl::IdlFile file = ep.file;
  file.module = "my-lib";
  CHECK(ninf::idl::FortranModuleName(file) == "ninf_my_lib");

  // What one Fortran module cannot hold is an error, with the reason.
  std::string params, args;
  for (int i = 0; i < 31; ++i) {
    params += (i ? ", IN int p" : "IN int p") + std::to_string(i);
    args += (i ? ", p" : "p") + std::to_string(i);
  }
  Compilation bad =
      Gen("Module m;\nDefine F() Calls \"C\" F();\nDefine f() Calls \"C\" f();\n"
          "Define wide(" +
          params + ") Calls \"C\" wide(" + args + ");\n");
  ninf::idl::Diagnostics diag;
  std::string f90;
  CHECK_FALSE(ninf::idl::GenerateFortranModule(bad, &diag, &f90));
  std::string errors = diag.Format();
  CHECK(Contains(errors,
                 "t.idl:3:8: error: Define 'f' and Define 'F' differ only in letter case: "
                 "Fortran names ignore case, so one Fortran module cannot hold both"));
  CHECK(Contains(errors,
                 "error: 'wide' has 31 parameters, and module ninf's Ninf_call takes at "
                 "most 30"));
  // The C header has no such limits.
  CHECK(Contains(ninf::idl::GenerateClientHeader(bad), "static inline int ninf_f(void)"));
}
