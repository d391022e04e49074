// Checks: the exact diagnostic of each semantic rule, and several errors
// reported from one file in reading order.
#include <catch2/catch.hpp>

#include "tests/idl/idl_test_util.h"

using ninf::idl::testing::Compile;

namespace {

// Compiles one Define line and returns its diagnostics.
std::string Errors(const std::string &define) { return Compile(define); }

}  // namespace

TEST_CASE("checks_accept_a_valid_file", "[idl][checks]") {
  CHECK(Errors("Module m;\n"
               "Define f(IN char c, IN short s, IN long l, IN int n, IN double a[n*c][s+l],\n"
               "         OUT int *info, IN string name, INOUT float v[], WORK double w[n])\n"
               "  CalcOrder n^2 * l Backend \"mpi\"\n"
               "  Calls \"c\" f(info, n, n, a, name, c, s, l, v, w);\n"
               "Define g(IN int n) Calls \"FORTRAN\" g(n);") == "");
}

TEST_CASE("checks_non_in_scalars", "[idl][checks]") {
  CHECK(Errors("Define f(OUT int x) Calls \"C\" f(x);") ==
        "t.idl:1:18: error: OUT scalar 'x' must be a pointer ('OUT int *x') or an array\n");
  CHECK(Errors("Define f(INOUT double x) Calls \"C\" f(x);") ==
        "t.idl:1:23: error: INOUT scalar 'x' must be a pointer ('INOUT double *x') or an array\n");
  CHECK(Errors("Define f(mode_work long x) Calls \"C\" f(x);") ==
        "t.idl:1:25: error: WORK scalar 'x' must be a pointer ('WORK long *x') or an array\n");
}

TEST_CASE("checks_strings_only_as_in_scalars", "[idl][checks]") {
  CHECK(Errors("Define f(IN int n, IN string s[n]) Calls \"C\" f(s);") ==
        "t.idl:1:30: error: string parameter 's' must be an IN scalar\n");
  CHECK(Errors("Define f(OUT string s) Calls \"C\" f(s);") ==
        "t.idl:1:21: error: string parameter 's' must be an IN scalar\n");
  CHECK(Errors("Define f(IN string *s) Calls \"C\" f(s);") ==
        "t.idl:1:21: error: string parameter 's' must be an IN scalar\n");
}

TEST_CASE("checks_dimension_names", "[idl][checks]") {
  CHECK(Errors("Define f(IN double d, OUT double a[d]) Calls \"C\" f(d, a);") ==
        "t.idl:1:36: error: a dimension of 'a' uses 'd', which is not an IN scalar of integer type "
        "(char, short, int or long)\n");
  CHECK(Errors("Define f(IN int m[2], OUT double a[m[0]]) Calls \"C\" f(m, a);") ==
        "t.idl:1:37: error: expected ']', found '['\n");
  CHECK(Errors("Define f(OUT int *k, OUT double a[2 * k]) Calls \"C\" f(k, a);") ==
        "t.idl:1:39: error: a dimension of 'a' uses 'k', which is not an IN scalar of integer type "
        "(char, short, int or long)\n");
  CHECK(Errors("Define f(OUT double a[n]) Calls \"C\" f(a);") ==
        "t.idl:1:23: error: unknown identifier 'n' in a dimension of 'a'\n");
  CHECK(Errors("Define f(IN int n) CalcOrder n * m + x Calls \"C\" f(n);") ==
        "t.idl:1:34: error: unknown identifier 'm' in CalcOrder\n"
        "t.idl:1:38: error: unknown identifier 'x' in CalcOrder\n");
  CHECK(Errors("Define f(IN float x) CalcOrder x Calls \"C\" f(x);") ==
        "t.idl:1:32: error: CalcOrder uses 'x', which is not an IN scalar of integer type (char, "
        "short, int or long)\n");
}

TEST_CASE("checks_names", "[idl][checks]") {
  CHECK(Errors("Define f(IN int n, IN double n) Calls \"C\" f(n);") ==
        "t.idl:1:30: error: duplicate parameter 'n' in Define 'f'\n");
  CHECK(Errors("Define f(IN int n) Calls \"C\" f(n, q);") ==
        "t.idl:1:35: error: unknown identifier 'q' in Calls (not a parameter of 'f')\n");
  CHECK(Errors("Define f(IN int n) Calls \"C\" f(n);\n\nDefine f() Calls \"C\" g();") ==
        "t.idl:3:8: error: duplicate Define 'f' (first defined at t.idl:1)\n");
  CHECK(Errors("Define f(IN int for) Calls \"C\" while(for);") ==
        "t.idl:1:17: error: parameter name 'for' is a C keyword\n"
        "t.idl:1:32: error: routine name 'while' is a C keyword\n");
  CHECK(Errors("Define f(IN int args) { }") ==
        "t.idl:1:17: error: parameter name 'args' is reserved in a Define with a C body\n");
  CHECK(Errors("Define f(IN int args) Calls \"C\" f(args);") == "");
}

TEST_CASE("checks_descriptions_are_utf8", "[idl][checks]") {
  // Found by fuzz/idl_fuzz: ninfd loaded it, clients could not parse it.
  CHECK(Errors("Define f() \"caf\xe9\" Calls \"C\" f();") ==
        "t.idl:1:12: error: the description of Define 'f' is not valid UTF-8\n");
  CHECK(Errors("Define f() \"caf\xc3\xa9\" Calls \"C\" f();") == "");
}

TEST_CASE("checks_language_and_backend", "[idl][checks]") {
  CHECK(Errors("Define f() Calls \"Pascal\" f();") ==
        "t.idl:1:18: error: unknown language 'Pascal' in Calls (expected \"C\" or \"Fortran\")\n");
  CHECK(Errors("Define f() Backend \"GPU\" Calls \"C\" f();") ==
        "t.idl:1:20: error: unknown Backend 'GPU' (expected \"MPI\")\n");
}

TEST_CASE("checks_syntax_rules", "[idl][checks]") {
  CHECK(Errors("Define f(IN int n, OUT double a[n][]) Calls \"C\" f(n, a);") ==
        "t.idl:1:35: error: only the first dimension of 'a' may be empty\n");
  CHECK(Errors("Define f(IN int n);") ==
        "t.idl:1:19: error: expected 'Calls' or a '{' body to end Define 'f', found ';'\n");
}

TEST_CASE("checks_report_several_errors_in_reading_order", "[idl][checks]") {
  CHECK(Compile("Module m;\n"
                "Define a(OUT int x, IN int n[2]) CalcOrder n Calls \"C\" a(x, y);\n"
                "Define b(IN int n, OUT double v[n][]) Calls \"C\" b(n, v);\n"
                "Define c(IN string s[3], OUT double r[k]) Calls \"Cobol\" c(s, r);\n"
                "Define a() Calls \"C\" a();\n") ==
        "t.idl:2:18: error: OUT scalar 'x' must be a pointer ('OUT int *x') or an array\n"
        "t.idl:2:44: error: CalcOrder uses 'n', which is not an IN scalar of integer type (char, "
        "short, int or long)\n"
        "t.idl:2:61: error: unknown identifier 'y' in Calls (not a parameter of 'a')\n"
        "t.idl:3:35: error: only the first dimension of 'v' may be empty\n"
        "t.idl:4:20: error: string parameter 's' must be an IN scalar\n"
        "t.idl:4:39: error: unknown identifier 'k' in a dimension of 'r'\n"
        "t.idl:4:49: error: unknown language 'Cobol' in Calls (expected \"C\" or \"Fortran\")\n"
        "t.idl:5:8: error: duplicate Define 'a' (first defined at t.idl:2)\n");
}

TEST_CASE("checks_mpi_clauses_need_backend_mpi", "[idl][checks]") {
  CHECK(Errors("Define f(IN int n) Distribute \"root\" Calls \"C\" f(n);") ==
        "t.idl:1:31: error: Distribute is for Backend \"MPI\" routines only\n");
  CHECK(Errors("Define f(IN int n) Backend \"MPI\" Distribute \"scatter\" Calls \"C\" f(n);") ==
        "t.idl:1:45: error: unknown Distribute 'scatter' (expected \"broadcast\" or \"root\")\n");
  CHECK(Errors("Define f(IN int n) Calls \"C\" f(MPI_COMM, n);") ==
        "t.idl:1:32: error: MPI_COMM in Calls passes an MPI communicator: only with Backend "
        "\"MPI\"\n");
  CHECK(Errors("Define f(IN int MPI_COMM) Backend \"MPI\" Calls \"C\" f(MPI_COMM);") ==
        "t.idl:1:17: error: parameter name 'MPI_COMM' is reserved (it passes the communicator "
        "of a Backend \"MPI\" routine)\n");
  CHECK(Errors(
            "Define f(IN int n) Backend \"MPI\" Distribute \"root\" Calls \"C\" f(MPI_COMM, n);") ==
        "");
}

// Issue 31: `IN char` with Calls "Fortran" was accepted silently, though the
// routine then reads a wrong hidden length.
TEST_CASE("checks_in_char_to_fortran_is_refused_with_the_fix", "[idl][checks]") {
  CHECK(Errors("Define f(IN char jobz, IN int n, OUT double w[jobz == 'V' ? n : 1])\n"
               "  Calls \"Fortran\" dsyev(jobz, n, w, jobz);") ==
        "t.idl:2:25: error: IN char 'jobz' is passed to the Fortran routine 'dsyev', which gets "
        "no hidden length for it (only strings have one), so a CHARACTER argument would read a "
        "wrong length: declare it 'IN string jobz' (a C client then passes a string such as "
        "\"N\", a Fortran one a CHARACTER), or 'IN char jobz[1]' if the routine's argument is "
        "not a CHARACTER\n");
  // The fixes, a char only sizing an array, and C routines are all fine.
  CHECK(Errors("Define f(IN string jobz, IN int n, OUT double w[n]) Calls \"Fortran\" "
               "dsyev(jobz, n, w);") == "");
  CHECK(Errors("Define f(IN char jobz[1], IN int n, OUT double w[n]) Calls \"Fortran\" "
               "g(jobz, n, w);") == "");
  CHECK(Errors("Define f(IN char c, IN int n, OUT double w[c == 'V' ? n : 1]) Calls \"fortran\" "
               "g(n, w);") == "");
  CHECK(Errors("Define f(IN char c, IN int n) Calls \"C\" g(c, n);") == "");
}
