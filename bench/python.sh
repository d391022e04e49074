#!/usr/bin/env bash
# bench/python.sh - the Python client against the C client: 16 MiB echo
# (INOUT, so 16 MiB each way) from one thread, the same loop in both
# (bench_throughput --no-check, bench/python_echo.py), against one ninfd
# started here. The two alternate ROUNDS times (default 3) so that both see
# the same machine; the report gives each round and the ratio of the medians
# (target: Python >= 95% of C). Writes bench/results/python-DATE.md (or
# --out FILE, never over an existing file), the raw lines beside it.
#
#   bench/python.sh BUILD_DIR [--out FILE] [--seconds S] [--rounds N]
set -euo pipefail

usage() {
  echo "usage: $0 BUILD_DIR [--out FILE] [--seconds S] [--rounds N]" >&2
  exit 2
}
[[ $# -ge 1 ]] || usage
build=$(cd "$1" && pwd) || usage
shift
here=$(cd "$(dirname "$0")" && pwd)
out="$here/results/python-$(date -u +%Y%m%d-%H%M%S).md"
seconds=5
rounds=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) usage ;;
  esac
done
[[ -e "$out" ]] && { echo "$0: $out exists; give another --out" >&2; exit 1; }
[[ -e "$build/python/ninf/__init__.py" ]] || { echo "$0: $build has no Python client" >&2; exit 1; }

work=$(mktemp -d)
source "$here/lib.sh"
trap bench_cleanup EXIT
start_daemon --
size=$((16 * 1024 * 1024))
raw="${out%.md}.raw.txt"
: >"$raw"
for r in $(seq "$rounds"); do
  "$build/bench/bench_throughput" --size "$size" --seconds "$seconds" --no-check | tee -a "$raw"
  PYTHONPATH="$build/python" /usr/bin/python3 "$here/python_echo.py" "$size" "$seconds" |
    tee -a "$raw"
done
stop_daemon

/usr/bin/python3 "$here/report.py" python "$raw" "$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')" >"$out"
cat "$out"
