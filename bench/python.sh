#!/usr/bin/env bash
# bench/python.sh - the Python client against the C client: 16 MiB echo
# (INOUT, so 16 MiB each way) from one thread, the same loop in both
# (bench_throughput --no-check, bench/python_echo.py), against one ninfd
# started here. The two alternate ROUNDS times (default 3) so that both see
# the same machine; the report gives each round and the ratio of the medians
# (target: Python >= 95% of C). Writes bench/results/python-DATE.md (or
# --out FILE, never over an existing file), the raw lines beside it.
#
#   bash bench/python.sh BUILD_DIR [--out FILE] [--quick] [--seconds S]
#       [--rounds N]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file, and the default is a
# new bench/results/python-DATE.md.)
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_declare python "The Python client against the C client, 16 MiB echo, alternated."
bench_option --seconds S seconds 5 1 "seconds per run"
bench_option --rounds N rounds 3 1 "rounds of a C run and a Python run"
bench_parse "$@"
bench_need server/ninfd bench/bench_throughput stubs/registry/echo
[[ -e "$build/python/ninf/__init__.py" ]] || { echo "$0: $build has no Python client" >&2; exit 1; }

start_daemon --
size=$((16 * 1024 * 1024))
raw=$raw_log
: >"$raw"
for _ in $(seq "$rounds"); do
  "$build/bench/bench_throughput" --size "$size" --seconds "$seconds" --no-check | tee -a "$raw"
  PYTHONPATH="$build/python" /usr/bin/python3 "$here/python_echo.py" "$size" "$seconds" |
    tee -a "$raw"
done
stop_daemon

/usr/bin/python3 "$here/report.py" python "$raw" "$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')" >"$out"
cat "$out"
