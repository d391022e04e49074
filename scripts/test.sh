#!/usr/bin/env bash
# Builds and runs every test, then prints "N passed, N failed" counted from
# Meson's test log. Exit status 0 only when nothing failed.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh || { echo "0 passed, 1 failed"; exit 1; }
BUILD=${NINF_BUILD:-build}
rm -f "$BUILD/meson-logs/testlog.json"
meson test -C "$BUILD" --print-errorlogs --num-processes 2 "$@"
python3 - "$BUILD/meson-logs/testlog.json" <<'PY'
import json, sys
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
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if failed else 0)
PY
