// Black-box tests of the Fortran client: a real ninfd serving the build
// tree's standard library, and the Fortran examples and test programs run
// as a user runs them, with NINF_SERVER pointing at the daemon. The last
// case builds programs in a folder outside the tree with the build tree's
// ninffc and ninfcc, as a user of an uninstalled tree would.
//
// Each TEST_CASE is one Meson test (tests/fortran/meson.build). The
// programs' paths come from the build (FORTRAN_* macros).
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "tests/server/daemon_fixture.h"

namespace {

struct Outcome {
  int status;          // exit status, or 128 + signal
  std::string output;  // stdout and stderr
};

// Runs a shell command line; its output is shown when a check fails.
Outcome Run(const std::string &command) {
  Outcome out{-1, ""};
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.output.append(buf, n);
  int status = pclose(pipe);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  UNSCOPED_INFO("$ " << command << "\n" << out.output);
  return out;
}

// Runs `program` (with arguments) against the daemon.
Outcome RunAgainst(const ninf::test::Daemon &d, const std::string &program) {
  return Run("NINF_SERVER=" + d.address() + " " + program);
}

bool Contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// A program as a user writes it: remote dgesv and ep from module ninf.
const char *kUserProgram = R"(program user
  use ninf
  implicit none
  integer, parameter :: n = 50
  real(8) :: a(n, n), b(n, 1), sx, sy, q(10)
  integer :: ipiv(n), info, ierr
  call random_number(a)
  call random_number(b)
  ierr = Ninf_call('dgesv', n, 1, a, n, ipiv, b, n, info)
  if (ierr /= 0 .or. info /= 0) then
    call Ninf_perror('dgesv')
    stop 1
  end if
  ierr = Ninf_call('ep', 16, sx, sy, q)
  if (ierr /= 0) then
    call Ninf_perror('ep')
    stop 1
  end if
  print '(a)', 'user program ok'
end program user
)";

const char *kUserCProgram = R"(#include <stdio.h>
#include "ninf.h"
int main(void) {
  double sx, sy, q[10];
  if (Ninf_call("ep", 16L, &sx, &sy, q) != 0) {
    Ninf_perror("ep");
    return 1;
  }
  printf("user C program ok\n");
  return 0;
}
)";

}  // namespace

TEST_CASE("fortran_dgesv", "[fortran]") {
  ninf::test::Daemon d;
  Outcome r = RunAgainst(d, FORTRAN_LINPACK " 300");
  CHECK(r.status == 0);
  CHECK(Contains(r.output, "PASSED"));
}

// A TLS ninfd (issue 43): the Fortran client takes the C client's TLS
// settings from the same variables (NINF_TLS_CA), and without them is told
// what to set.
TEST_CASE("fortran_tls", "[fortran]") {
  ninf::test::TempDir pki;
  REQUIRE(Run("bash " SITE_CA_SH " " + pki.path() + " ca && bash " SITE_CA_SH " " + pki.path() +
              " server server 127.0.0.1")
              .status == 0);
  ninf::test::Daemon d({"--tls-cert", pki.Join("server.pem"), "--tls-key", pki.Join("server.key")});
  Outcome r = RunAgainst(
      d, "NINF_TRANSPORT=tcp NINF_TLS_CA=" + pki.Join("ca.pem") + " " FORTRAN_LINPACK " 300");
  CHECK(r.status == 0);
  CHECK(Contains(r.output, "PASSED"));
  r = RunAgainst(d, "NINF_TRANSPORT=tcp " FORTRAN_LINPACK " 300");
  CHECK(r.status != 0);
  CHECK(Contains(r.output, "set tls_ca"));
}

TEST_CASE("fortran_ep", "[fortran]") {
  ninf::test::Daemon d;
  Outcome r = RunAgainst(d, FORTRAN_EP " 24");
  CHECK(r.status == 0);
  CHECK(Contains(r.output, "VERIFIED"));
}

// The same programs calling the parallel routines, run as MPI jobs by the
// server: only the routine's name changes.
TEST_CASE("fortran_mpi", "[fortran]") {
  ninf::test::Daemon d({"--mpi-ranks", "2", "--mpi-oversubscribe"});
  Outcome ep = RunAgainst(d, FORTRAN_EP " 24 ep_mpi");
  CHECK(ep.status == 0);
  CHECK(Contains(ep.output, "VERIFIED"));
  Outcome lin = RunAgainst(d, FORTRAN_LINPACK " 200 pdgesv");
  CHECK(lin.status == 0);
  CHECK(Contains(lin.output, "PASSED"));
}

TEST_CASE("fortran_async", "[fortran]") {
  ninf::test::Daemon d;
  Outcome r = RunAgainst(d, FORTRAN_ASYNC_TEST);
  CHECK(r.status == 0);
  CHECK(Contains(r.output, "ok: INTEGER(8) ipiv and info copied back at Ninf_wait_all"));
}

TEST_CASE("fortran_transaction", "[fortran]") {
  ninf::test::Daemon d;
  Outcome r = RunAgainst(d, FORTRAN_TRANSACTION_TEST);
  CHECK(r.status == 0);
  CHECK(Contains(r.output, "ok: the discarded intermediate was not written back"));
  CHECK(Contains(r.output, "ok: INTEGER(8) ipiv and info copied back at the end"));
  CHECK(Contains(r.output, "ok: an end without a block is refused"));
  // examples/fortran/transaction.f90, as a user runs it.
  Outcome example = RunAgainst(d, FORTRAN_TRANSACTION_EXAMPLE);
  CHECK(example.status == 0);
  CHECK(Contains(example.output, "the block of 6 calls: VERIFIED"));
}

// examples/fortran/two_phase.f90: one process submits and exits, another
// collects with the ticket.
TEST_CASE("fortran_two_phase", "[fortran]") {
  ninf::test::Daemon d;
  Outcome submitted = RunAgainst(d, FORTRAN_TWO_PHASE_EXAMPLE " submit");
  REQUIRE(submitted.status == 0);
  const std::size_t at = submitted.output.find("ticket ninf1:");
  REQUIRE(at != std::string::npos);
  std::string ticket = submitted.output.substr(at + 7);
  ticket = ticket.substr(0, ticket.find_first_of(" \n"));
  Outcome collected = RunAgainst(d, FORTRAN_TWO_PHASE_EXAMPLE " collect '" + ticket + "'");
  CHECK(collected.status == 0);
  CHECK(Contains(collected.output, "VERIFIED"));
  // Collected once: the second time the ticket is spent.
  Outcome again = RunAgainst(d, FORTRAN_TWO_PHASE_EXAMPLE " collect '" + ticket + "'");
  CHECK(again.status != 0);
  CHECK(Contains(again.output, "invalid call id"));
}

TEST_CASE("fortran_grpc", "[fortran]") {
  ninf::test::Daemon d;
  Outcome r = RunAgainst(d, FORTRAN_GRPC_TEST);
  CHECK(r.status == 0);
  CHECK(Contains(r.output, "ok: grpc_finalize"));
}

// linpack.f90 compiled with -fdefault-integer-8: every INTEGER argument is
// 8 bytes where the IDL says int.
TEST_CASE("fortran_integer8", "[fortran]") {
  ninf::test::Daemon d;
  Outcome r = RunAgainst(d, FORTRAN_LINPACK_I8 " 300");
  CHECK(r.status == 0);
  CHECK(Contains(r.output, "PASSED"));
}

TEST_CASE("fortran_refusals", "[fortran]") {
  ninf::test::Daemon d;
  Outcome r = RunAgainst(d, FORTRAN_REFUSE_TEST);
  CHECK(r.status == 0);
  // What Ninf_perror printed for two of the refusals.
  CHECK(Contains(r.output,
                 "a non-contiguous section: arguments do not match the interface: "
                 "argument 6 'b': expected a contiguous rank-2 REAL(8) array, got a "
                 "non-contiguous rank-2 REAL(8) array"));
  CHECK(Contains(r.output,
                 "argument 3 'a': expected a contiguous rank-2 REAL(8) array, got a "
                 "rank-2 INTEGER(4) array"));
}

// The messages of two LAPACK habits (tests/fortran/msgs_test.f90, against
// tests/client/msgs's dsyev-shaped wsquery): a workspace query, and a
// NINF_SERVER where no ninfd is (a daemon's port after it stopped).
TEST_CASE("fortran_messages", "[fortran]") {
  ninf::test::Daemon d({"--registry", MSGS_REGISTRY_DIR});
  Outcome query = RunAgainst(d, FORTRAN_MSGS_TEST " query");
  CHECK(query.status == 0);
  CHECK(Contains(query.output,
                 "workspace query: arguments do not match the interface: argument 4 of wsquery "
                 "('work') would have -1 elements: argument 5 ('lwork') = -1 asks for a "
                 "workspace query, which cannot work remotely (the routine would write the size "
                 "it wants into 'work', which never comes back). Pass the workspace size itself "
                 "as 'lwork': at least the minimum the routine documents, more for speed; the "
                 "server allocates 'work', so pass NULL for it from C, any array from Fortran, "
                 "None from Python."));

  ninf::test::Daemon gone({"--registry", MSGS_REGISTRY_DIR});
  const std::string address = gone.address();
  REQUIRE(gone.Stop() == 0);
  Outcome refused = Run("NINF_SERVER=" + address + " " FORTRAN_MSGS_TEST " refused");
  CHECK(refused.status == 0);
  CHECK(Contains(refused.output,
                 address + ": Connection refused; no ninfd at " + address +
                     ", the default server (from NINF_SERVER=" + address +
                     "): start ninfd there, or set NINF_SERVER=host:port to a running one (or "
                     "pass -server host:port to a program that calls Ninf_parse_arg, or set "
                     "default_server in the file given to grpc_initialize)"));
}

TEST_CASE("fortran_wrappers_outside_the_tree", "[fortran]") {
  ninf::test::TempDir dir;
  dir.WriteFile("user.f90", kUserProgram);
  dir.WriteFile("user.c", kUserCProgram);
  const std::string cd = "cd " + dir.path() + " && ";

  Outcome shown = Run(cd + NINFFC " --showme user.f90 -o user");
  CHECK(shown.status == 0);
  CHECK(Contains(shown.output, "-lninf_fortran"));
  CHECK_FALSE(Contains(Run(NINFFC " --showme:compile").output, "-lninf"));
  CHECK(Contains(Run(NINFFC " --showme:link").output, "-lninf_fortran -lninf"));
  CHECK(Contains(Run(NINFCC " --showme:version").output, "ninfcc: Ninf 0."));
  Outcome unknown = Run(NINFCC " --showme:everything");
  CHECK(unknown.status == 2);
  CHECK(Contains(unknown.output, "--showme:version"));

  REQUIRE(Run(cd + NINFFC " user.f90 -o user").status == 0);
  // Compiling and linking apart: -c adds no link flags.
  REQUIRE(Run(cd + NINFFC " -c user.f90 -o user_apart.o").status == 0);
  REQUIRE(Run(cd + NINFFC " user_apart.o -o user_apart").status == 0);
  REQUIRE(Run(cd + NINFCC " user.c -o user_c").status == 0);

  ninf::test::Daemon d;
  CHECK(Contains(RunAgainst(d, dir.Join("user")).output, "user program ok"));
  CHECK(Contains(RunAgainst(d, dir.Join("user_apart")).output, "user program ok"));
  CHECK(Contains(RunAgainst(d, dir.Join("user_c")).output, "user C program ok"));
}

namespace {

// A C program of the typed-call tests: every standard library header,
// declarations, then `return CALL;`.
std::string TypedCProgram(const std::string &call) {
  return "#include \"ninf_bench.h\"\n#include \"ninf_blas.h\"\n#include \"ninf_ep.h\"\n"
         "#include \"ninf_lapack.h\"\n#include \"ninf_mpi.h\"\n"
         "int main(void) {\n"
         "  static double a[16], b[16], c[16];\n"
         "  static float s[16];\n"
         "  int n = 4, ipiv[4], info = 0;\n"
         "  (void)s, (void)c, (void)ipiv, (void)info;\n"
         "  return " +
         call + ";\n}\n";
}

// The same in Fortran: `ierr = CALL`.
std::string TypedFortranProgram(const std::string &call) {
  return "program typed\n"
         "  use ninf_blas, only: ninf_dgemm\n"
         "  use ninf_lapack, only: ninf_dgesv\n"
         "  implicit none\n"
         "  real(8) :: a(4, 4), b(4, 4), c(4, 4)\n"
         "  real(4) :: s(4, 4)\n"
         "  integer :: ipiv(4), info, ierr\n"
         "  a = 1\n  b = 1\n  c = 0\n  s = 0\n  info = 0\n"
         "  ierr = " +
         call +
         "\n"
         "  print *, ierr, info, ipiv(1), s(1, 1), c(1, 1)\n"
         "end program typed\n";
}

// Compiles `source` as `file` in `dir` with `compiler` and `flags` (in the
// C locale, so that the messages quote with ').
Outcome Compile(const ninf::test::TempDir &dir, const std::string &compiler,
                const std::string &file, const std::string &source, const std::string &flags) {
  dir.WriteFile(file, source);
  return Run("cd " + dir.path() + " && LC_ALL=C " + compiler + " " + flags + " -c " + file);
}

}  // namespace

// Typed calls (ninf-gen --header and --fortran, issue 45): the standard
// library's and a user IDL's, from C and from Fortran, against a ninfd that
// serves both. Every IDL type goes through, and C passes integer literals
// where the IDL says double (the dgemm that crashed through Ninf_call).
TEST_CASE("typed_calls", "[fortran]") {
  ninf::test::Daemon d({"--registry", "stdlib", "--registry", TYPED_REGISTRY_DIR});
  Outcome c = RunAgainst(d, TYPED_CALLS_C);
  CHECK(c.status == 0);
  CHECK(Contains(c.output, "typed C calls ok"));
  Outcome fortran = RunAgainst(d, TYPED_CALLS_FORTRAN);
  CHECK(fortran.status == 0);
  CHECK(Contains(fortran.output, "typed Fortran calls ok"));
}

// What the compiler says of wrong arguments to a typed call, built with the
// build tree's ninfcc and ninffc as a user builds: mistakes that Ninf_call's
// varargs (C) and assumed-type dummies (Fortran) let through to run time.
TEST_CASE("typed_calls_refused", "[fortran]") {
  ninf::test::TempDir dir;
  const std::string strict = "-Wall -Wextra -Werror";
  // Right calls compile cleanly, in C, in C++ and in Fortran.
  CHECK(Compile(dir, NINFCC, "right.c",
                TypedCProgram("ninf_dgemm('N', 'N', n, n, n, 1, a, n, b, n, 0, c, n)"), strict)
            .status == 0);
  CHECK(Compile(dir, "CC=g++ " NINFCC, "right.cc",
                TypedCProgram("ninf_dgesv(n, 1, a, n, ipiv, b, n, &info)"), strict)
            .status == 0);
  CHECK(Compile(dir, NINFFC, "right.f90",
                TypedFortranProgram("ninf_dgemm('N', 'N', 4, 4, 4, 1d0, a, 4, b, 4, 0d0, c, 4)"),
                strict)
            .status == 0);

  struct Wrong {
    const char *call;
    const char *message;
  };
  // C: errors with any flags.
  for (const Wrong &w : {
           Wrong{"ninf_dgesv(n, 1, a, n, ipiv, b, n)",
                 "too few arguments to function 'ninf_dgesv'"},
           Wrong{"ninf_dgesv(n, 1, 2.0, n, ipiv, b, n, &info)",
                 "incompatible type for argument 3 of 'ninf_dgesv'"},
       }) {
    Outcome out = Compile(dir, NINFCC, "wrong.c", TypedCProgram(w.call), "");
    CHECK(out.status != 0);
    CHECK(Contains(out.output, w.message));
  }
  // C: warnings in GCC 12, errors from GCC 14 on, and with the two flags
  // docs/client.md gives.
  for (const Wrong &w : {
           Wrong{"ninf_dgemm(\"N\", 'N', n, n, n, 1, a, n, b, n, 0, c, n)",
                 "passing argument 1 of 'ninf_dgemm' makes integer from pointer without a cast"},
           Wrong{"ninf_dgemm('N', 'N', n, n, n, 1, s, n, b, n, 0, c, n)",
                 "passing argument 7 of 'ninf_dgemm' from incompatible pointer type"},
           Wrong{"ninf_dgesv(n, 1, a, n, ipiv, b, n, info)",
                 "passing argument 8 of 'ninf_dgesv' makes pointer from integer without a cast"},
       }) {
    Outcome out = Compile(dir, NINFCC, "wrong.c", TypedCProgram(w.call),
                          "-Werror=int-conversion -Werror=incompatible-pointer-types");
    CHECK(out.status != 0);
    CHECK(Contains(out.output, w.message));
  }
  // Fortran: errors with any flags.
  for (const Wrong &w : {
           Wrong{"ninf_dgesv(4, 4, s, 4, ipiv, b, 4, info)",
                 "Type mismatch in argument 'a' at (1); passed REAL(4) to REAL(8)"},
           Wrong{"ninf_dgesv(4, 4, a, 4, ipiv, b, 4)",
                 "Missing actual argument for argument 'info'"},
           Wrong{"ninf_dgemm('N', 'N', 4, 4, 4, 1, a, 4, b, 4, 0, c, 4)",
                 "Type mismatch in argument 'alpha' at (1); passed INTEGER(4) to REAL(8)"},
           Wrong{"ninf_dgesv(4, 4, a, 4, ipiv, b, 4, 0)",
                 "Non-variable expression in variable definition context (actual argument to "
                 "INTENT = OUT/INOUT)"},
       }) {
    Outcome out = Compile(dir, NINFFC, "wrong.f90", TypedFortranProgram(w.call), "");
    CHECK(out.status != 0);
    CHECK(Contains(out.output, w.message));
  }
}
