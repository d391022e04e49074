#!/usr/bin/env python3
"""Golden tests of ninf-gen.

For every golden/NAME.idl, runs `ninf-gen -o out NAME.idl` inside a copy of
golden/ (so the paths written into the outputs are stable) and compares:
  - with golden/NAME.err: exit status 1, no output files, stderr exactly NAME.err;
  - otherwise: exit status 0, empty stderr, and the files written equal those
    in golden/NAME.expected/; `--list-outputs` names exactly those files; and,
    with --cc, every generated C file passes `cc -fsyntax-only -Wall -Wextra
    -Werror -I<stub runtime>`.
A first line `// ninf-gen-args: ...` adds command-line arguments.
`--update` rewrites the expectations from the current ninf-gen instead.
"""
import argparse
import difflib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile


def extra_args(idl_path):
    with open(idl_path) as f:
        first = f.readline()
    marker = "// ninf-gen-args:"
    return shlex.split(first[len(marker):]) if first.startswith(marker) else []


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def diff(expected, actual, name):
    lines = difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                 "expected/" + name, "actual/" + name)
    return "".join(lines)


class Case:
    def __init__(self, args, golden, name):
        self.args, self.golden, self.name = args, golden, name
        self.failures = []

    def fail(self, message):
        self.failures.append(message)

    def run(self, work, *flags):
        idl = self.name + ".idl"
        cmd = [self.args.ninf_gen, *flags, *extra_args(os.path.join(self.golden, idl)), idl]
        return subprocess.run(cmd, cwd=work, capture_output=True, text=True)

    def check(self, update):
        err_path = os.path.join(self.golden, self.name + ".err")
        expected_dir = os.path.join(self.golden, self.name + ".expected")
        with tempfile.TemporaryDirectory() as tmp:
            self.work = os.path.join(tmp, "work")
            shutil.copytree(self.golden, self.work,
                            ignore=shutil.ignore_patterns("*.expected", "*.err"))
            out = os.path.join(self.work, "out")
            proc = self.run(self.work, "-o", "out")
            written = sorted(os.listdir(out)) if os.path.isdir(out) else []
            if update:
                return self.update(proc, out, written, err_path, expected_dir)
            if os.path.exists(err_path):
                self.check_error(proc, written, read(err_path))
            else:
                self.check_outputs(proc, out, written, expected_dir)
        return not self.failures

    def check_error(self, proc, written, expected):
        if proc.returncode != 1:
            self.fail(f"exit status {proc.returncode}, expected 1")
        if written:
            self.fail(f"wrote {written} despite errors")
        if proc.stdout:
            self.fail("unexpected stdout:\n" + proc.stdout)
        if proc.stderr != expected:
            self.fail("stderr differs:\n" + diff(expected, proc.stderr, self.name + ".err"))

    def check_outputs(self, proc, out, written, expected_dir):
        if proc.returncode != 0 or proc.stderr:
            self.fail(f"exit status {proc.returncode}, stderr:\n{proc.stderr}")
            return
        expected = sorted(os.listdir(expected_dir)) if os.path.isdir(expected_dir) else []
        if written != expected:
            self.fail(f"files written {written}, expected {expected}")
        for name in sorted(set(written) & set(expected)):
            want, got = read(os.path.join(expected_dir, name)), read(os.path.join(out, name))
            if want != got:
                self.fail("content differs:\n" + diff(want, got, name))
        listed = self.run(self.work, "--list-outputs")
        if listed.returncode != 0 or sorted(listed.stdout.split()) != expected:
            self.fail(f"--list-outputs printed {listed.stdout.split()} (status "
                      f"{listed.returncode}), expected {expected}")
        self.check_depfile(listed.stdout.split())
        if self.args.cc:
            for name in written:
                if name.endswith(".c"):
                    self.syntax_check(os.path.join("out", name))

    def check_depfile(self, outputs):
        """--depfile: the first stub depends on the IDL and what it includes."""
        proc = self.run(self.work, "-o", "dep", "--depfile", "deps.d")
        deps = read(os.path.join(self.work, "deps.d")) if proc.returncode == 0 else ""
        first_stub = outputs[0] if outputs else None
        wanted = [self.name + ".idl"]
        with open(os.path.join(self.golden, self.name + ".idl")) as f:
            wanted += [line.split('"')[1] for line in f if line.startswith('#include "')]
        if not deps.startswith(f"dep/{first_stub}:") or not all(w in deps for w in wanted):
            self.fail(f"--depfile wrote {deps!r} (status {proc.returncode}), expected a rule for "
                      f"dep/{first_stub} naming {wanted}")

    def syntax_check(self, path):
        mpi = "ninf_stub_mpi.h" in read(os.path.join(self.work, path))
        if mpi and self.args.mpi_include is None:
            return  # a Backend "MPI" stub needs mpi.h, which this build has not found
        cmd = [self.args.cc, "-std=gnu11", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
               "-I", self.args.stub_include, path]
        if mpi:
            cmd[-1:-1] = ["-I", self.args.mpi_include]
        proc = subprocess.run(cmd, cwd=self.work, capture_output=True, text=True)
        if proc.returncode != 0:
            self.fail(f"{shlex.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")

    def update(self, proc, out, written, err_path, expected_dir):
        shutil.rmtree(expected_dir, ignore_errors=True)
        if os.path.exists(err_path):
            os.remove(err_path)
        if proc.returncode == 0:
            shutil.copytree(out, expected_dir)
            print(f"updated {self.name}.expected/ ({len(written)} files)")
        else:
            with open(err_path, "w") as f:
                f.write(proc.stderr)
            print(f"updated {self.name}.err (exit status {proc.returncode})")
        return True


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ninf-gen", required=True, help="the ninf-gen executable")
    parser.add_argument("--golden", default=os.path.join(os.path.dirname(__file__), "golden"))
    parser.add_argument("--cc", help="C compiler for the syntax check of generated stubs")
    parser.add_argument("--stub-include", help="the folder holding ninf_stub.h")
    parser.add_argument("--mpi-include", help="the folder holding mpi.h (Backend \"MPI\" stubs)")
    parser.add_argument("--update", action="store_true", help="rewrite the expectations")
    parser.add_argument("names", nargs="*", help="only these cases (default: all)")
    args = parser.parse_args()
    args.ninf_gen = os.path.abspath(args.ninf_gen)
    if args.stub_include:
        args.stub_include = os.path.abspath(args.stub_include)
    if args.cc and not args.stub_include:
        parser.error("--cc needs --stub-include")

    names = args.names or sorted(f[:-4] for f in os.listdir(args.golden) if f.endswith(".idl"))
    failed = 0
    for name in names:
        case = Case(args, args.golden, name)
        if case.check(args.update):
            print(f"ok   {name}")
            continue
        failed += 1
        print(f"FAIL {name}")
        for message in case.failures:
            print("  " + message.replace("\n", "\n  "))
    if not args.update:
        print(f"{len(names) - failed}/{len(names)} golden cases passed")
        if failed:
            print(f"To accept the new output: {sys.argv[0]} --ninf-gen {args.ninf_gen} --update")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
