#!/usr/bin/env bash
# bench/placement.sh - ninf-meta's placement latency (issue 9): p50 / p99
# per decision against 10 ... 10,000 synthetic servers, for each policy,
# with a bare scan of the same candidates as the same-run baseline; written
# up as bench/results/placement.md (raw log next to it).
#
#   bench/placement.sh BUILD_DIR [--out FILE] [--decisions N]
set -euo pipefail

usage() {
  echo "usage: $0 BUILD_DIR [--out FILE] [--decisions N]" >&2
  exit 2
}
[[ $# -ge 1 ]] || usage
build=$(cd "$1" && pwd) || usage
shift
here=$(cd "$(dirname "$0")" && pwd)
out="$here/results/placement.md"
decisions=20000
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) [[ $# -ge 2 ]] || usage; out=$2; shift 2 ;;
    --decisions) [[ $# -ge 2 ]] || usage; decisions=$2; shift 2 ;;
    *) usage ;;
  esac
done
raw_log="${out%.md}.raw.txt"
"$build/bench/bench_placement" --decisions "$decisions" | tee "$raw_log" >&2

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
{
  echo "# Placement latency (ninf-meta, issue 9), $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "\`bench/placement.sh\` on $cpu ($(nproc) vCPUs): one decision = rank the candidates"
  echo "(best + 2 for retries) and reserve the predicted work on the chosen one; $decisions"
  echo "decisions per row, a dgesv n = 2000 call, synthetic servers re-drawn every 1,000"
  echo "decisions. Baseline of the same run: a bare scan for the smallest of one field."
  echo
  echo "| servers | policy | p50 µs | p99 µs | bare scan p50 µs | p50 / scan | target (p99) |"
  echo "|---:|---|---:|---:|---:|---:|---|"
  /usr/bin/python3 "$here/report.py" placement "$raw_log"
} >"$out"
echo "placement.sh: wrote $out" >&2
