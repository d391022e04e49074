#!/usr/bin/env python3
"""Counts a Meson test log (meson-logs/testlog.json) and prints
"[PREFIX: ]N passed, N failed[, N skipped]"; exit status 1 when anything
failed or nothing ran at all.

    python3 scripts/count_tests.py BUILD/meson-logs/testlog.json [PREFIX]
"""
import json
import sys

passed = failed = skipped = 0
try:
    lines = open(sys.argv[1]).read().splitlines()
except OSError:
    lines = []
for line in lines:
    if not line.strip():
        continue
    result = json.loads(line).get("result")
    if result in ("OK", "EXPECTEDFAIL"):
        passed += 1
    elif result == "SKIP":
        skipped += 1
    else:
        failed += 1
if passed + failed == 0:
    failed = 1  # no test ran: that is a failure, not a pass
prefix = sys.argv[2] + ": " if len(sys.argv) > 2 else ""
print(f"{prefix}{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if failed else 0)
