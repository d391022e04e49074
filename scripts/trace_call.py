#!/usr/bin/env python3
"""Which source files one remote dgesv call runs through (docs/server.md, "The traced call").

A review traced the call by reading; this measures it. It needs a coverage build of ninfd, the
dgesv executable and the linpack demo client:

  meson setup build-cov --buildtype=debugoptimized -Db_coverage=true -Dpeers=false
  ninja -C build-cov server/ninfd stubs/registry/dgesv examples/c/linpack_demo
  python3 scripts/trace_call.py build-cov

It runs ninfd twice on loopback: once serving one one-shot dgesv call from the demo client
(its default admission: after arrival; a cold start, see NINFD_ARGS), once idle for as long.
Every process writes its line counts into the same .gcda files, so a file the call ran through
is one where some line ran more often in the first run than in the second: the client's, the
executable's and ninfd's parts of the call, not ninfd's start-up, shutdown or idle timers.
Files are the project's own (.cc and .h); generated protobuf code is counted apart.
"""

import argparse
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
# The call's executable must exit by itself to write its counts (a killed process writes none):
# it serves this one call and no warm one waits; the call's own path is the default one-shot
# cold start.
NINFD_ARGS = ["--warm-executables", "0", "--executable-max-calls", "1"]


def clear_counts(build):
    for gcda in build.rglob("*.gcda"):
        gcda.unlink()


def start_ninfd(build, work):
    ready = work / "port"
    log = open(work / "ninfd.log", "w")
    proc = subprocess.Popen(
        [str(build / "server/ninfd"), "--port", "0", "--listen", "127.0.0.1", "--slots", "1",
         "--ready-file", str(ready)] + NINFD_ARGS, stderr=log)
    for _ in range(200):
        if ready.exists() and ready.read_text().strip():
            return proc, ready.read_text().strip()
        time.sleep(0.05)
    proc.kill()
    sys.exit("ninfd did not start: see " + str(work / "ninfd.log"))


def stop_ninfd(proc):
    proc.send_signal(signal.SIGTERM)
    if proc.wait(timeout=60) != 0:
        sys.exit("ninfd exited with status %d" % proc.returncode)


def run_once(build, n, call, seconds):
    """One ninfd life; returns how long the middle part (the call, or the wait) took."""
    clear_counts(build)
    with tempfile.TemporaryDirectory() as tmp:
        proc, port = start_ninfd(build, pathlib.Path(tmp))
        time.sleep(1.0)  # warm executables started, timers running: the same in both runs
        began = time.monotonic()
        if call:
            env = dict(os.environ, NINF_SERVER="127.0.0.1:" + port)
            subprocess.run([str(build / "examples/c/linpack_demo"), str(n)], env=env, check=True,
                           stdout=subprocess.DEVNULL)
        else:
            time.sleep(seconds)
        took = time.monotonic() - began
        time.sleep(1.0)
        stop_ninfd(proc)
    return took


def line_counts(build):
    """{source file: {line: count}} over every .gcda of the build."""
    counts = {}
    for gcda in build.rglob("*.gcda"):
        out = subprocess.run(["gcov", "--json-format", "--stdout", "-o", str(gcda.parent),
                              str(gcda)], cwd=build, capture_output=True, check=True).stdout
        for text in out.decode().splitlines():
            if not text.startswith("{"):
                continue
            for f in json.loads(text)["files"]:
                path = os.path.normpath(os.path.join(build, f["file"]))
                lines = counts.setdefault(path, {})
                for line in f["lines"]:
                    lines[line["line_number"]] = lines.get(line["line_number"], 0) + line["count"]
    return counts


def crossed(with_call, idle):
    files = []
    for path, lines in with_call.items():
        before = idle.get(path, {})
        if any(count > before.get(number, 0) for number, count in lines.items()):
            files.append(path)
    return files


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", type=pathlib.Path, help="a build with -Db_coverage=true")
    parser.add_argument("--n", type=int, default=200, help="the matrix order (default 200)")
    parser.add_argument("--list", action="store_true", help="print every file")
    args = parser.parse_args()
    build = args.build.resolve()
    took = run_once(build, args.n, True, 0)
    with_call = line_counts(build)
    run_once(build, args.n, False, took)
    idle = line_counts(build)
    files = crossed(with_call, idle)
    ours = sorted(os.path.relpath(p, ROOT) for p in files
                  if p.startswith(str(ROOT)) and not p.startswith(str(build)))
    generated = [p for p in files if p.startswith(str(build))]
    folders = {}
    for path in ours:
        folders.setdefault(os.path.dirname(path), []).append(path)
    print("%d project files (%d generated files apart)" % (len(ours), len(generated)))
    for folder, paths in sorted(folders.items()):
        print("  %-16s %d" % (folder + "/", len(paths)))
        if args.list:
            for path in paths:
                print("      " + os.path.basename(path))


if __name__ == "__main__":
    main()
