#!/usr/bin/env python3
"""Every C, Fortran and Python example of README.md and docs/, run.

Each fenced block tagged c, fortran or python is built (with the build
tree's ninfcc and ninffc, as the README says) and run against a real ninfd
serving the standard library, inside a harness that declares what the
examples take as given: n, the matrices, ipiv, info, the EP sums. The
examples declare their own variables where they differ (an inner C block, a
Fortran BLOCK shadows the harness's). The server address the examples
write, 127.0.0.1:3000, is replaced by the daemon's. A whole Fortran program
(`program ...`) is built as it is; a Python block of `>>>` lines runs as a
doctest, its printed output compared with the example's.

An example passes when it exits 0, prints nothing on stderr, and (C) leaves
no error as the thread's last. A block that cannot run here says so on the
line before its fence: `<!-- snippet: not run, REASON -->`; the test lists
those with their reasons.

    doc_snippets_test.py SOURCE_ROOT BUILD_DIR [--no-mpi]

--no-mpi: a build without MPI serves no ep_mpi nor pdgesv, so docs/mpi.md's
examples are not run.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

LANGUAGES = ("c", "fortran", "python")
ADDRESS_IN_DOCS = "127.0.0.1:3000"
NOT_RUN = re.compile(r"<!-- snippet: not run, (.+?) -->\s*$")

C_HARNESS = """#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grpc.h>
#include <ninf.h>
#include <ninf_bench.h>
#include <ninf_blas.h>
#include <ninf_ep.h>
#include <ninf_lapack.h>
#include <ninf_mpi.h>
%(includes)s
int main(void) {
  enum { N = 64 };
  int n = N, nrhs = 1, lda = N, ldb = N, info = 0, ipiv[N];
  long m = 20;
  double sx = 0, sy = 0, q[10];
  static double a[N * N], b[N * N], c[N * N], A[N * N], B[N * N], C[N * N], D[N * N],
      E[N * N], P[N * N];
  for (int k = 0; k < N * N; ++k) a[k] = A[k] = B[k] = D[k] = (k %% 13) / 13.0, b[k] = 1;
  for (int k = 0; k < N; ++k) a[k * N + k] += N;
  (void)n, (void)nrhs, (void)lda, (void)ldb, (void)info, (void)ipiv, (void)m, (void)sx;
  (void)sy, (void)q, (void)c, (void)C, (void)E, (void)P;
  {
%(body)s
  }
  if (Ninf_get_error() != 0) {
    fprintf(stderr, "the example left an error: %%s\\n", Ninf_error_string(Ninf_get_error()));
    return 1;
  }
  return 0;
}
"""

FORTRAN_HARNESS = """program snippet
  use ninf
  implicit none
  integer, parameter :: n = 64
  real(8) :: a(n, n), b(n, 1)
  real(8), asynchronous :: sx, sy, q(10)
  integer :: ipiv(n), info, ierr, id, k_
  call random_number(a)
  call random_number(b)
  do k_ = 1, n
    a(k_, k_) = a(k_, k_) + n
  end do
  block
%(body)s
  end block
end program snippet
"""

# What a doc's text says its examples' variables are, where the harness's
# differ.
C_DECLARATIONS = {"docs/transactions.md": "long n = N;  /* dmmul's n */"}
PYTHON_DECLARATIONS = {"docs/python.md": "B = rng.random((n, n))  # dmmul's B\n"}

PYTHON_PRELUDE = """import concurrent.futures
import numpy as np
import ninf
ninf.set_server(%(address)r)
n = 1000
rng = np.random.default_rng(1)
A = rng.random((n, n)) + n * np.eye(n)
B = rng.random((n, 1))
b = rng.random(n)
S = A + A.T
systems = [(np.asfortranarray(A), rng.random(n)) for _ in range(2)]
ipiv = np.empty(n, dtype=np.int32)
"""


WAIT_FOR_FUTURES = """
for value in list(globals().values()):
    for f in value if isinstance(value, list) else [value]:
        if isinstance(f, concurrent.futures.Future):
            f.result()
"""


def snippets(root):
    """(doc, line, language, body, reason or None) for every tagged block."""
    found = []
    docs = ["README.md"] + sorted(os.path.relpath(p, root)
                                  for p in glob.glob(os.path.join(root, "docs", "*.md")))
    for doc in docs:
        lines = open(os.path.join(root, doc)).read().split("\n")
        i = 0
        while i < len(lines):
            fence = re.match(r"^```(\w+)\s*$", lines[i])
            if not fence:
                i += 1
                continue
            end = lines.index("```", i + 1)
            if fence.group(1) in LANGUAGES:
                before = NOT_RUN.search(lines[i - 1]) if i else None
                found.append((doc, i + 1, fence.group(1), "\n".join(lines[i + 1:end]),
                              before.group(1) if before else None))
            i = end + 1
    return found


def run(cmd, cwd, env=None, timeout=300):
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def build_c(doc, body, work, build):
    includes = "\n".join(l for l in body.split("\n") if l.startswith("#include"))
    lines = [C_DECLARATIONS.get(doc, "")] + [l for l in body.split("\n")
                                             if not l.startswith("#include")]
    code = "\n".join("    " + l for l in lines)
    with open(os.path.join(work, "snippet.c"), "w") as f:
        f.write(C_HARNESS % {"includes": includes, "body": code})
    return run([os.path.join(build, "tools", "ninfcc"), "snippet.c", "-o", "snippet", "-lm"],
               work)


def build_fortran(doc, body, work, build):
    source = body if re.match(r"^\s*program\b", body, re.I) else \
        FORTRAN_HARNESS % {"body": "\n".join("    " + l for l in body.split("\n"))}
    with open(os.path.join(work, "snippet.f90"), "w") as f:
        f.write(source)
    return run([os.path.join(build, "tools", "ninffc"), "snippet.f90", "-o", "snippet"], work)


def run_python(doc, body, work, address, env):
    prelude = PYTHON_PRELUDE % {"address": address} + PYTHON_DECLARATIONS.get(doc, "")
    if body.lstrip().startswith(">>>"):
        script = (prelude + "import doctest, sys\n"
                  "test = doctest.DocTestParser().get_doctest(open('snippet.txt').read(), "
                  "globals(), 'snippet', 'snippet.txt', 0)\n"
                  "runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | "
                  "doctest.NORMALIZE_WHITESPACE)\n"
                  "runner.run(test)\n"
                  "sys.exit(1 if runner.failures else 0)\n")
        with open(os.path.join(work, "snippet.txt"), "w") as f:
            f.write(body + "\n")
    else:
        # What the example starts is waited for, so that its errors surface.
        script = prelude + body + WAIT_FOR_FUTURES
    with open(os.path.join(work, "snippet.py"), "w") as f:
        f.write(script)
    return run(["/usr/bin/python3", "snippet.py"], work, env)


def check(snippet, work, build, address, env):
    doc, line, language, body, _ = snippet
    body = body.replace(ADDRESS_IN_DOCS, address)
    if language == "python":
        return run_python(doc, body, work, address, env), None
    built = (build_c if language == "c" else build_fortran)(doc, body, work, build)
    if built.returncode != 0:
        return built, "does not build"
    return run(["./snippet"], work, env), None


def start_daemon(build, tmp):
    ready = os.path.join(tmp, "ready")
    daemon = subprocess.Popen(
        [os.path.join(build, "server", "ninfd"), "--port", "0", "--ready-file", ready,
         "--log-level", "warn"] + ([] if "--no-mpi" in sys.argv[3:] else
                                    ["--mpi-ranks", "2", "--mpi-oversubscribe"]),
        cwd=tmp)
    for _ in range(200):
        if os.path.exists(ready) and open(ready).read().strip():
            return daemon, "127.0.0.1:" + open(ready).read().split()[0]
        if daemon.poll() is not None:
            sys.exit("ninfd exited with status %d" % daemon.returncode)
        time.sleep(0.05)
    daemon.kill()
    sys.exit("ninfd did not become ready")


def main():
    root, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    found = snippets(root)
    if "--no-mpi" in sys.argv[3:]:
        found = [s[:4] + (s[4] or "this build has no MPI",) if s[0] == "docs/mpi.md" else s
                 for s in found]
    for language in LANGUAGES:
        assert any(s[2] == language for s in found), "no %s example found" % language
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        daemon, address = start_daemon(build, tmp)
        env = dict(os.environ, NINF_SERVER=address)
        try:
            for snippet in found:
                doc, line, language = snippet[:3]
                where = "%s:%d (%s)" % (doc, line, language)
                if snippet[4]:
                    print("not run  %s: %s" % (where, snippet[4]))
                    continue
                work = tempfile.mkdtemp(dir=tmp)
                outcome, stage = check(snippet, work, build, address, env)
                ok = outcome.returncode == 0 and not stage and not outcome.stderr.strip()
                print("%s  %s" % ("ok      " if ok else "FAILED  ", where))
                if not ok:
                    failures += 1
                    print("  %s, exit status %d\n%s%s" % (stage or "ran", outcome.returncode,
                                                          outcome.stdout, outcome.stderr))
        finally:
            daemon.terminate()
            daemon.wait(timeout=30)
    print("%d examples, %d failed" % (len(found), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
