#!/usr/bin/env python3
"""Counts a Meson test log (meson-logs/testlog.json) and prints
"[PREFIX: ]N passed, N failed[, N skipped]", after one "failed test:" line
per failure (name, result, duration) and its output's last lines; exit status 1 when anything
failed or nothing ran at all.

    python3 scripts/count_tests.py BUILD/meson-logs/testlog.json [PREFIX]
"""
import json
import sys

TAIL_LINES = 12  # of a failed test's output, repeated after the count's lines

passed = failed = skipped = 0
failures = []  # (name, result, seconds, output): a log's tail names them
try:
    lines = open(sys.argv[1]).read().splitlines()
except OSError:
    lines = []
for line in lines:
    if not line.strip():
        continue
    record = json.loads(line)
    result = record.get("result")
    if result in ("OK", "EXPECTEDFAIL"):
        passed += 1
    elif result == "SKIP":
        skipped += 1
    else:
        failed += 1
        failures.append((record.get("name"), result, record.get("duration", 0.0),
                         record.get("stdout") or ""))
if passed + failed == 0:
    failed = 1  # no test ran: that is a failure, not a pass
prefix = sys.argv[2] + ": " if len(sys.argv) > 2 else ""
for name, result, seconds, output in failures:
    print(f"{prefix}failed test: {name} ({result} after {seconds:.1f} s)")
    for line in output.splitlines()[-TAIL_LINES:]:
        print(f"{prefix}failed test: {name} | {line[:200]}")
print(f"{prefix}{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if failed else 0)
