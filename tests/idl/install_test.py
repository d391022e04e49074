#!/usr/bin/env python3
"""End-to-end test of `ninf-gen --install` (registering a library).

The real stub runtime belongs to stubs/ and may not be built here, so the
test links a stand-in: fake_runtime.c implements ninf_stub_main() by calling
the generated invoke function once on fixed arguments and printing the OUT
array. It is published as ninf-stub.pc in a private PKG_CONFIG_PATH, exactly
as the real runtime is. This checks, with real compilers: the generated
casts for C, Fortran (with a hidden CHARACTER length) and inline bodies; the
CompileOptions, Required (relative to the IDL folder) and Library flags;
the installed files; and failures (a compile error reported at its IDL
line, a missing ninf-stub.pc).
"""
import argparse
import os
import subprocess
import sys
import tempfile

FAKE_RUNTIME = r"""
#include <stdio.h>
#include <string.h>
#include "ninf_stub.h"

/* Test stand-in for the stub runtime: one invoke on fixed arguments for
 * (IN int n, IN double a[n], IN double b[n], OUT double c[n], IN string tag). */
int ninf_stub_main(int argc, char **argv, const unsigned char *iface, size_t iface_len,
                   ninf_stub_invoke_fn invoke) {
  int n = 3;
  double a[3] = {1, 2, 3}, b[3] = {10, 20, 30}, c[3] = {0, 0, 0};
  char tag[] = "tag";
  void *args[] = {&n, a, b, c, tag};
  if (argc > 1 && strcmp(argv[1], "--interface-bytes") == 0) {
    printf("%zu %d\n", iface_len, iface_len > 0 ? iface[0] : -1);
    return 0;
  }
  invoke(args);
  printf("%g %g %g\n", c[0], c[1], c[2]);
  return 0;
}
"""

IDL = r"""
Module vec;
CompileOptions "-O1 -DOFFSET=100";
Library "-lgfortran -lm";

Globals {
  static double offset(void) { return OFFSET; }
}

Define vadd_c(IN int n, IN double a[n], IN double b[n], OUT double c[n], IN string tag)
  Required "lib/vadd.c"
  Calls "C" vadd(n, a, b, c);

Define vadd_f(IN int n, IN double a[n], IN double b[n], OUT double c[n], IN string tag)
  Required "lib/vaddf.f90"
  Calls "Fortran" VADDF(n, a, b, c);

Define vadd_tag(IN int n, IN double a[n], IN double b[n], OUT double c[n], IN string tag)
  Required "lib/vtag.f90"
  Calls "Fortran" vtag(n, a, b, c, tag);

Define vadd_body(IN int n, IN double a[n], IN double b[n], OUT double c[n], IN string tag)
{
  for (int i = 0; i < n; i++) c[i] = a[i] + b[i] + offset() + (tag[0] == 't');
}
"""

VADD_C = """void vadd(int n, double *a, double *b, double *c) {
  for (int i = 0; i < n; i++) c[i] = a[i] + b[i];
}
"""

VADDF = """subroutine vaddf(n, a, b, c)
  integer :: n
  double precision :: a(n), b(n), c(n)
  c = a + b
end subroutine
"""

VTAG = """subroutine vtag(n, a, b, c, tag)
  integer :: n
  double precision :: a(n), b(n), c(n)
  character(len=*) :: tag
  c = a + b + len(tag)
end subroutine
"""

# No Library line: the link fails on dsyev_, which ninf-gen must explain
# (issue 31) instead of leaving the linker's "undefined reference".
NO_LIBRARY_IDL = """Module lapackish;
Define dsyev(IN string jobz, IN string uplo, IN int n, INOUT double a[n][lda], IN int lda,
             OUT double w[n], WORK double work[lwork], IN int lwork, OUT int *info)
  Calls "Fortran" dsyev(jobz, uplo, n, a, lda, w, work, lwork, info);
"""

NO_LIBRARY_MESSAGE = (
    "ninf-gen: error: cannot link dsyev: no library given defines 'dsyev_', the Fortran routine "
    "its Calls names: add the library that does to the IDL file, e.g. Library \"-llapack\"; "
    "(LAPACK; or \"-lopenblas\").\n")

BAD_IDL = """Module broken;
Define bad(IN int n, OUT double c[n])
{ c[0] = n + undeclared_name; }
"""

EXPECTED = {
    "vadd_c": "11 22 33",
    "vadd_f": "11 22 33",
    "vadd_tag": "14 25 36",     # + len("tag")
    "vadd_body": "112 123 134",  # + OFFSET from CompileOptions + 1
}


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class Failures(list):
    def check(self, ok, message):
        if not ok:
            self.append(message)
            print("FAIL " + message)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ninf-gen", required=True)
    parser.add_argument("--cc", default="cc")
    parser.add_argument("--stub-include", required=True)
    args = parser.parse_args()
    ninf_gen = os.path.abspath(args.ninf_gen)
    args.stub_include = os.path.abspath(args.stub_include)
    failures = Failures()

    with tempfile.TemporaryDirectory() as tmp:
        write(os.path.join(tmp, "rt", "fake_runtime.c"), FAKE_RUNTIME)
        runtime_obj = os.path.join(tmp, "rt", "fake_runtime.o")
        subprocess.run([args.cc, "-c", "-I", args.stub_include, "-o", runtime_obj,
                        os.path.join(tmp, "rt", "fake_runtime.c")], check=True)
        write(os.path.join(tmp, "pc", "ninf-stub.pc"),
              f"Name: ninf-stub\nDescription: test stand-in\nVersion: 0\n"
              f"Cflags: -I{args.stub_include}\nLibs: {runtime_obj}\n")
        write(os.path.join(tmp, "src", "vec.idl"), IDL)
        write(os.path.join(tmp, "src", "lib", "vadd.c"), VADD_C)
        write(os.path.join(tmp, "src", "lib", "vaddf.f90"), VADDF)
        write(os.path.join(tmp, "src", "lib", "vtag.f90"), VTAG)
        write(os.path.join(tmp, "src", "bad.idl"), BAD_IDL)
        write(os.path.join(tmp, "src", "dsyev.idl"), NO_LIBRARY_IDL)
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(tmp, "pc"), CC=args.cc)
        registry = os.path.join(tmp, "registry")

        # Install from another folder: Required paths resolve against src/.
        proc = subprocess.run([ninf_gen, "--install", registry, "-v", "-o", "build",
                               "src/vec.idl"], cwd=tmp, env=env, capture_output=True, text=True)
        print(proc.stderr)
        failures.check(proc.returncode == 0, f"--install exited {proc.returncode}")
        failures.check("src/lib/vadd.c" in proc.stderr, "-v does not show the resolved Required")
        failures.check("-DOFFSET=100" in proc.stderr, "-v does not show CompileOptions")
        for name, want in EXPECTED.items():
            exe = os.path.join(registry, name)
            failures.check(os.access(exe, os.X_OK), f"{exe} not installed")
            if not os.access(exe, os.X_OK):
                continue
            got = subprocess.run([exe], capture_output=True, text=True).stdout.strip()
            failures.check(got == want, f"{name} printed {got!r}, expected {want!r}")
            with open(os.path.join(registry, name + ".interface")) as f:
                installed = f.read()
            with open(os.path.join(tmp, "build", name + ".interface")) as f:
                failures.check(installed == f.read(), f"{name}.interface differs from the build")
            failures.check(f'name: "{name}"' in installed, f"{name}.interface lacks its name")
            failures.check(os.path.exists(os.path.join(tmp, "build", name + "_stub.c")),
                           f"-o build did not keep {name}_stub.c")
        leftovers = [f for f in os.listdir(registry) if f.startswith(".")]
        failures.check(not leftovers, f"temporary files left in the registry: {leftovers}")
        # It says what it installed, and how a ninfd comes to serve it.
        print(proc.stdout)
        for name in EXPECTED:
            line = f"installed {name}: {registry}/{name} and {registry}/{name}.interface\n"
            failures.check(line in proc.stdout, f"--install did not print {line!r}")
        failures.check(
            f"To serve them: a running ninfd whose registry lists {registry} serves them after "
            f"`kill -HUP <pid of ninfd>`" in proc.stdout and
            f"`ninfd --registry stdlib --registry {registry}`" in proc.stdout,
            "--install does not say how to serve the functions:\n" + proc.stdout)

        # A missing Library: the function, the symbol and the fix, not the
        # linker's raw report (which -v still shows); nothing installed.
        proc = subprocess.run([ninf_gen, "--install", registry, "src/dsyev.idl"], cwd=tmp,
                              env=env, capture_output=True, text=True)
        failures.check(proc.returncode == 1, f"no Library: exit {proc.returncode}, expected 1")
        failures.check(proc.stderr == NO_LIBRARY_MESSAGE,
                       "no Library: stderr is not exactly the message:\n" + proc.stderr)
        failures.check(not os.path.exists(os.path.join(registry, "dsyev")), "dsyev was installed")
        failures.check("installed" not in proc.stdout, "a failed install said 'installed'")
        proc = subprocess.run([ninf_gen, "--install", registry, "-v", "src/dsyev.idl"], cwd=tmp,
                              env=env, capture_output=True, text=True)
        failures.check(proc.returncode == 1 and "undefined reference" in proc.stderr and
                       proc.stderr.endswith(NO_LIBRARY_MESSAGE),
                       "no Library with -v: the raw report and the message expected:\n" +
                       proc.stderr)

        # A C error in a body is reported at its IDL line, and nothing is installed.
        proc = subprocess.run([ninf_gen, "--install", registry, "src/bad.idl"], cwd=tmp, env=env,
                              capture_output=True, text=True)
        failures.check(proc.returncode == 1, f"broken body: exit {proc.returncode}, expected 1")
        failures.check("src/bad.idl:3:" in proc.stderr,
                       "the compiler error does not name the IDL line:\n" + proc.stderr)
        failures.check("ninf-gen: error: compiling bad failed" in proc.stderr,
                       "no ninf-gen error for the failed compile:\n" + proc.stderr)
        failures.check(not os.path.exists(os.path.join(registry, "bad")), "bad was installed")
        leftovers = [f for f in os.listdir(registry) if f.startswith(".")]
        failures.check(not leftovers, f"temporary files left after a failure: {leftovers}")

        # Without ninf-stub.pc the user is told how to point pkg-config at it
        # (a pkg-config that finds nothing: ninf-gen's own build tree would
        # otherwise provide the real one).
        env_nopc = dict(env, PKG_CONFIG="false")
        proc = subprocess.run([ninf_gen, "--install", registry, "src/vec.idl"], cwd=tmp,
                              env=env_nopc, capture_output=True, text=True)
        failures.check(proc.returncode == 1 and "set PKG_CONFIG_PATH to the folder holding "
                       "ninf-stub.pc" in proc.stderr,
                       f"missing ninf-stub.pc: exit {proc.returncode}, stderr:\n{proc.stderr}")

    print(f"{len(failures)} failure(s)" if failures else "install test passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
