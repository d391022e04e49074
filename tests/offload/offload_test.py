#!/usr/bin/env python3
"""libninf_offload on unmodified programs, against a real ninfd.

Builds an ordinary C LAPACKE/CBLAS program and an ordinary Fortran Linpack
program twice each: the normal way (cc/gfortran ... -llapack) and relinked
(ninfcc/ninffc --offload ... -llapack). Runs the normal builds for the
reference results, starts ninfd on a free loopback port, and checks:

  - the wrappers: --offload puts -lninf_offload before the first LAPACK
    library, only when linking; the relinked binaries need it before
    liblapack;
  - relinked, and the normal build under LD_PRELOAD: every result equal to
    the local run bit for bit, each routine logged as offloaded, ninfd's
    `completed` count grown by exactly the calls sent, the workspace query
    (lwork = -1) answered locally, and an illegal argument (INFO = -4 from
    the server) run again locally;
  - threshold: a tiny n stays local under the default floor, and a large
    NINF_OFFLOAD_MIN_FLOPS keeps everything local (the count does not move);
  - NINF_OFFLOAD=0: everything local;
  - a bad NINF_OFFLOAD_MIN_FLOPS: a warning, and the program still right;
  - NINF_OFFLOAD_LOG=1: the lines on stderr;
  - a server that refuses every call (max_call_bytes): the same results,
    every call logged local after its remote failure;
  - the server down: the same results, every call logged local, exit 0.

A third program, threads_program.c, makes 4 threads x 3 dgesv_ calls at
once: it takes part in every case above, and its results too are the local
ones bit for bit.

A fourth, transaction_program.c, is a Ninf client calling dgesv_ inside a
transaction block, where Ninf_call only records: the call must run locally.

    offload_test.py NINFD NINFCC NINFFC LIBNINF_OFFLOAD LAPACKE_PROGRAM.c LINPACK.f90 \
                    THREADS_PROGRAM.c TRANSACTION_PROGRAM.c
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

N_C = 100      # the C program's matrices
N_F = 200      # the Fortran Linpack's
N_T = 60       # the threaded program's
N_TINY = 8     # under the default floor (kDefaultMinFlops, offload/policy.h)
ROUTINES = ("dgesv", "dgetrf", "dgetrs", "dposv", "dsyev", "dgemm")


def run(cmd, env=None, check=True):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


def base_env():
    """The environment of every program run: no Ninf variables from the
    caller, and one BLAS thread, as the server's executables get
    (--thread-budget fixed --threads-per-job 1), so local and remote runs
    are the same computation."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("NINF_") and k != "LD_PRELOAD"}
    env["OPENBLAS_NUM_THREADS"] = "1"
    env["OMP_NUM_THREADS"] = "1"
    return env


def read(path):
    with open(path, "rb") as f:
        return f.read()


def log_lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [l.rstrip("\n") for l in f if l.startswith("ninf_offload ")]


def field(line, key):
    m = re.search(rf"\b{key}=(\S+)", line)
    return m.group(1) if m else None


class Server:
    def __init__(self, ninfd, work, flags=(), name="ninfd"):
        self.ninfd, self.work = ninfd, work
        ready = os.path.join(work, name + ".ready")
        self.log = open(os.path.join(work, name + ".log"), "w")
        self.proc = subprocess.Popen(
            [ninfd, "--port", "0", "--ready-file", ready,
             "--thread-budget", "fixed", "--threads-per-job", "1", *flags],
            stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 30
        while not (os.path.exists(ready) and open(ready).read().strip()):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("ninfd did not get ready: see " + self.log.name)
            time.sleep(0.05)
        self.port = open(ready).read().split()[0]
        self.address = f"127.0.0.1:{self.port}"

    def completed(self):
        out = run([self.ninfd, "--status", "--server", self.address]).stdout
        m = re.search(r"^completed:(\d+)$", out, re.M)
        assert m, f"no completed line in ninfd --status:\n{out}"
        return int(m.group(1))

    def completed_at_least(self, target, seconds=5):
        """completed once it reaches target, or its value after `seconds`:
        ninfd counts a call when its executable reports the end, which may
        come after the client already has the result."""
        deadline = time.monotonic() + seconds
        value = self.completed()
        while value < target and time.monotonic() < deadline:
            time.sleep(0.05)
            value = self.completed()
        return value

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def main():
    ninfd, ninfcc, ninffc, libpath, c_source, f_source, t_source, x_source = sys.argv[1:9]
    # The launcher of unmodified programs, beside the build tree's wrappers.
    launcher = os.path.join(os.path.dirname(ninfcc), "ninf-offload")
    # The executables run the OpenBLAS kernels ninfd chooses for this CPU
    # (docs/server.md: better than the library's own on a CPU it does not
    # know); the local runs get the same, or "bit for bit" would compare
    # two kernels' roundings. Set here, every program and ninfd inherit it.
    if "OPENBLAS_CORETYPE" not in os.environ:
        os.environ["OPENBLAS_CORETYPE"] = run([ninfd, "--openblas-core"]).stdout.strip()
    work = tempfile.mkdtemp(prefix="ninf-offload-")
    server = None
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    try:
        os.chdir(work)
        cc = os.environ.get("CC", "cc")
        fc = os.environ.get("FC", "gfortran")
        c_libs = ["-llapacke", "-llapack", "-lblas"]
        # The wrappers: --offload goes before the first LAPACK/BLAS library,
        # only when linking; --showme:offload prints the flags alone.
        shown = run([ninfcc, "--showme", "--offload", "p.c", "-o", "p"] + c_libs).stdout
        expect("-lninf_offload" in shown and
               shown.index("-lninf_offload") < shown.index("-llapacke"),
               f"ninfcc --offload: -lninf_offload not before -llapacke: {shown}")
        shown = run([ninffc, "--showme", "--offload", "-c", "p.f90"]).stdout
        expect("-lninf_offload" not in shown, f"ninffc --offload -c links: {shown}")
        shown = run([ninffc, "--showme:offload"]).stdout
        expect(shown.strip().endswith("-lninf_offload"), f"ninffc --showme:offload: {shown}")
        # The normal builds: nothing of Ninf in them.
        run([cc, c_source, "-o", "c_plain"] + c_libs)
        run([fc, f_source, "-o", "f_plain", "-llapack"])
        # Relinked: the same sources and libraries, with --offload.
        run([ninfcc, "--offload", c_source, "-o", "c_relinked"] + c_libs)
        run([ninffc, "--offload", f_source, "-o", "f_relinked", "-llapack"])
        run([cc, t_source, "-o", "t_plain", "-llapack", "-lpthread"])
        run([ninfcc, "--offload", t_source, "-o", "t_relinked", "-llapack", "-lpthread"])
        # A Ninf client: ninfcc alone for the reference.
        run([ninfcc, x_source, "-o", "x_plain", "-llapack"])
        run([ninfcc, "--offload", x_source, "-o", "x_relinked", "-llapack"])
        for exe in ("c_relinked", "f_relinked", "t_relinked"):
            needed = re.findall(r"\(NEEDED\).*\[(.*)\]", run(["readelf", "-d", exe]).stdout)
            names = [n.split(".so")[0] for n in needed]
            # Before liblapack when the linker kept it (with --as-needed it
            # may not: every LAPACK symbol the program names is then ours).
            expect("libninf_offload" in names and
                   ("liblapack" not in names or
                    names.index("libninf_offload") < names.index("liblapack")),
                   f"{exe}: libninf_offload is not needed before liblapack: {needed}")

        programs = {  # name: (normal build, relinked build, n)
            "c": ("./c_plain", "./c_relinked", N_C),
            "f": ("./f_plain", "./f_relinked", N_F),
            "t": ("./t_plain", "./t_relinked", N_T),
        }
        ref = {}
        for name, (plain, _, n) in programs.items():
            for size in (n, N_TINY):
                out = f"ref_{name}_{size}.bin"
                run([plain, str(size), out], env=base_env())
                ref[(name, size)] = read(out)

        server = Server(ninfd, work)
        serial = [0]

        def offload_run(name, how, size, extra, expect_remote):
            """Runs program `name` (`how`: relinked, preloaded by LD_PRELOAD,
            or launched by ninf-offload) and checks its results and log;
            returns the log lines."""
            plain, relinked, _ = programs[name]
            serial[0] += 1
            out = f"out_{serial[0]}.bin"
            log = os.path.join(work, f"offload_{serial[0]}.log")
            env = base_env()
            env.update({"NINF_SERVER": server.address, "NINF_OFFLOAD_LOG": log})
            env.update(extra)
            cmd = [relinked, str(size), out]
            if how == "preloaded":
                env["LD_PRELOAD"] = libpath
                cmd[0] = plain
            elif how == "launched":
                cmd = [launcher, plain] + cmd[1:]
            before = server.completed() if server.proc.poll() is None else None
            p = run(cmd, env=env)
            label = f"{name} {how} n={size} {extra}"
            expect(read(out) == ref[(name, size)],
                   f"{label}: results differ from the local run")
            lines = log_lines(log)
            expect(len(lines) > 0, f"{label}: no log lines")
            remote = [l for l in lines if field(l, "where") == "remote"]
            # Calls the server ran whose INFO < 0 was then run again here.
            rerun = [l for l in lines if "remote INFO" in l]
            if expect_remote:
                expect(len(remote) > 0, f"{label}: nothing offloaded:\n" + "\n".join(lines))
            else:
                expect(not remote, f"{label}: offloaded although it should not:\n" +
                       "\n".join(remote))
            if before is not None:
                reached = len(remote) + len(rerun)
                grown = server.completed_at_least(before + reached) - before
                expect(grown == reached,
                       f"{label}: ninfd completed grew by {grown}, {reached} calls sent")
            print(f"{label}: {len(remote)} of {len(lines)} calls offloaded; {p.stdout.strip()}")
            return lines

        # Relinked, preloaded and launched, everything above a zero threshold
        # offloaded.
        for how in ("relinked", "preloaded", "launched"):
            lines = offload_run("c", how, N_C, {"NINF_OFFLOAD_MIN_FLOPS": "0"}, True)
            routines = {field(l, "routine") for l in lines if field(l, "where") == "remote"}
            expect(set(ROUTINES) <= routines,
                   f"c {how}: routines not offloaded: {set(ROUTINES) - routines}")
            # One line per call: 12 calls (lapacke_program.c), of which the
            # workspace query stays local and the illegal dgesv_ (lda < n)
            # comes back with INFO = -4 and runs again locally; the
            # sub-block (lda > n) is sent packed.
            expect(len(lines) == 12, f"c {how}: {len(lines)} log lines, expected 12")
            query = [l for l in lines if "workspace query" in l]
            expect(len(query) == 1 and field(query[0], "where") == "local",
                   f"c {how}: the workspace query is not one local line: {query}")
            illegal = [l for l in lines if "remote INFO -4 " in l]
            expect(len(illegal) == 1 and field(illegal[0], "where") == "local",
                   f"c {how}: the illegal dgesv_ is not one local rerun: {illegal}")
            lines = offload_run("f", how, N_F, {"NINF_OFFLOAD_MIN_FLOPS": "0"}, True)
            expect(len(lines) == 1 and field(lines[0], "routine") == "dgesv",
                   f"f {how}: expected one dgesv line: {lines}")
            # 4 threads x 3 calls at once, every one sent.
            lines = offload_run("t", how, N_T, {"NINF_OFFLOAD_MIN_FLOPS": "0"}, True)
            expect(len(lines) == 12 and all(field(l, "where") == "remote" for l in lines),
                   f"t {how}: expected 12 remote lines:\n" + "\n".join(lines))

        # Inside a Ninf transaction block: local, whatever the threshold.
        ref_env = dict(base_env(), NINF_SERVER=server.address)
        run(["./x_plain", str(N_T), "x_ref.bin"], env=ref_env)
        env = base_env()
        log = os.path.join(work, "transaction.log")
        env.update({"NINF_SERVER": server.address, "NINF_OFFLOAD_MIN_FLOPS": "0",
                    "NINF_OFFLOAD_LOG": log})
        before = server.completed()
        run(["./x_relinked", str(N_T), "x_out.bin"], env=env)
        expect(read("x_out.bin") == read("x_ref.bin"), "transaction block: results differ")
        lines = log_lines(log)
        expect(len(lines) == 1 and field(lines[0], "where") == "local" and
               "transaction block" in lines[0],
               f"transaction block: expected one local line: {lines}")
        expect(server.completed() == before, "transaction block: a call reached the server")

        # Threshold: the default floor keeps a tiny n local; a huge
        # NINF_OFFLOAD_MIN_FLOPS keeps everything local.
        for name in programs:
            lines = offload_run(name, "relinked", N_TINY, {}, False)
            expect(all("the default floor" in l or "workspace query" in l for l in lines),
                   f"{name} tiny: not kept local by the floor:\n" + "\n".join(lines))
            n = programs[name][2]
            lines = offload_run(name, "relinked", n, {"NINF_OFFLOAD_MIN_FLOPS": "1e15"}, False)
            expect(all("NINF_OFFLOAD_MIN_FLOPS 1e+15" in l or "workspace query" in l
                       for l in lines),
                   f"{name} min flops: not kept local by the threshold:\n" + "\n".join(lines))
            lines = offload_run(name, "preloaded", n, {"NINF_OFFLOAD": "0"}, False)
            expect(all('why="NINF_OFFLOAD=0"' in l for l in lines),
                   f"{name} NINF_OFFLOAD=0: not every line says so:\n" + "\n".join(lines))

        # A bad value: a warning on stderr, the model decides, results right.
        env = base_env()
        env.update({"NINF_SERVER": server.address, "NINF_OFFLOAD_MIN_FLOPS": "lots"})
        p = run(["./f_relinked", str(N_F), "bad.bin"], env=env)
        expect("NINF_OFFLOAD_MIN_FLOPS='lots'" in p.stderr,
               f"no warning for a bad NINF_OFFLOAD_MIN_FLOPS: {p.stderr!r}")
        expect(read("bad.bin") == ref[("f", N_F)], "bad NINF_OFFLOAD_MIN_FLOPS: results differ")

        # Log to stderr with NINF_OFFLOAD_LOG=1.
        env = base_env()
        env.update({"NINF_SERVER": server.address, "NINF_OFFLOAD_MIN_FLOPS": "0",
                    "NINF_OFFLOAD_LOG": "1"})
        p = run(["./f_relinked", str(N_F), "stderr.bin"], env=env)
        expect(re.search(r"^ninf_offload pid=\d+ routine=dgesv where=remote ", p.stderr, re.M),
               f"NINF_OFFLOAD_LOG=1: no remote line on stderr: {p.stderr!r}")

        # A server that refuses every call (max_call_bytes 4096, under any of
        # these calls' arrays): each call sent fails there and runs here
        # instead, with the same bits (the INOUT arrays put back first).
        small = Server(ninfd, work, ["--max-call-bytes", "4096"], "small")
        try:
            big_server, server = server, small
            for name in programs:
                lines = offload_run(name, "relinked", programs[name][2],
                                    {"NINF_OFFLOAD_MIN_FLOPS": "0"}, False)
                failed = [l for l in lines if "remote call failed" in l]
                expect(failed and all(field(l, "where") == "local" for l in lines),
                       f"{name} refused by the server: not run locally:\n" + "\n".join(lines))
                expect(server.completed() == 0, f"{name}: the small server completed a call")
        finally:
            small.stop()
            server = big_server

        # The server down: local fallback, same bits, the log says why.
        server.stop()
        for name in programs:
            for how in ("relinked", "preloaded"):
                lines = offload_run(name, how, programs[name][2],
                                    {"NINF_OFFLOAD_MIN_FLOPS": "0"}, False)
                expect(all(field(l, "where") == "local" for l in lines),
                           f"{name} {how} server down: a call not local")
                expect(any("cannot connect" in l or "unreachable" in l for l in lines),
                       f"{name} {how} server down: no line names the server:\n" +
                       "\n".join(lines))
        # Without a log, the first fallback still says so on stderr, once
        # per process, naming the cause; NINF_OFFLOAD_WARN=0 silences it.
        # (Before, a wrong NINF_SERVER ran everything locally in silence.)
        for name in programs:
            plain, relinked, size = programs[name]
            for warn in ("1", "0"):
                env = base_env()
                env.update({"NINF_SERVER": server.address, "NINF_OFFLOAD_MIN_FLOPS": "0",
                            "NINF_OFFLOAD_WARN": warn})
                out = f"quiet_{name}_{warn}.bin"
                p = run([relinked, str(size), out], env=env)
                expect(read(out) == ref[(name, size)], f"{name} fallback: results differ")
                said = [l for l in p.stderr.splitlines() if "not on the server" in l]
                if warn == "1":
                    expect(len(said) == 1 and said[0].startswith("ninf_offload: ") and
                           ("cannot connect" in said[0] or "unreachable" in said[0]) and
                           "NINF_OFFLOAD_WARN=0" in said[0],
                           f"{name}: not one fallback line naming the cause: {p.stderr!r}")
                else:
                    expect(not said, f"{name}: NINF_OFFLOAD_WARN=0 still said: {p.stderr!r}")
        if failures:
            print(f"{len(failures)} failure(s); work folder kept: {work}")
            return 1
        print("offload_test: all cases passed")
        return 0
    finally:
        if server:
            server.stop()
        if not failures:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
