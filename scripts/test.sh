#!/usr/bin/env bash
# Builds and runs every test, then prints "N passed, N failed" counted from
# Meson's test log. Exit status 0 only when nothing failed.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh || { echo "0 passed, 1 failed"; exit 1; }
BUILD=${NINF_BUILD:-build}
rm -f "$BUILD/meson-logs/testlog.json"
meson test -C "$BUILD" --print-errorlogs --num-processes 2 "$@"
python3 scripts/count_tests.py "$BUILD/meson-logs/testlog.json"
