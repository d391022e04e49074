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

python3 - "$raw" "$out" "$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')" <<'PY'
import re, statistics, sys
raw, out, commit = sys.argv[1:4]
rows = {"echo": [], "echo-python": []}
for line in open(raw):
    m = re.search(r"what=(\S+) .* mb_per_s=([\d.]+)", line)
    if m:
        rows[m.group(1)].append(float(m.group(2)))
c, p = rows["echo"], rows["echo-python"]
ratio = statistics.median(p) / statistics.median(c)
with open(out, "w") as f:
    f.write(f"# Python client vs C client: 16 MiB echo (commit {commit})\n\n")
    f.write("One thread, INOUT 16 MiB each way, one-shot calls against one ninfd on loopback;\n")
    f.write("C: `bench_throughput --no-check`, Python: `bench/python_echo.py`, alternating.\n\n")
    f.write("| round | C MB/s | Python MB/s | Python / C |\n|---:|---:|---:|---:|\n")
    for i, (x, y) in enumerate(zip(c, p), 1):
        f.write(f"| {i} | {x:.0f} | {y:.0f} | {y / x:.3f} |\n")
    f.write(f"| median | {statistics.median(c):.0f} | {statistics.median(p):.0f} | "
            f"**{ratio:.3f}** |\n\n")
    f.write(f"Target: Python >= 0.95 x C: **{'met' if ratio >= 0.95 else 'missed'}**.\n")
print(open(out).read())
PY
