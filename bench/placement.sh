#!/usr/bin/env bash
# bench/placement.sh - ninf-meta's placement latency (issue 9): p50 / p99
# per decision against 10 ... 10,000 synthetic servers, for each policy,
# with a bare scan of the same candidates as the same-run baseline; written
# up as bench/results/placement-DATE.md (raw log next to it).
#
#   bash bench/placement.sh BUILD_DIR [--out FILE] [--quick] [--decisions N]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file, and the default is a
# new bench/results/placement-DATE.md.)
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_declare placement "ninf-meta's placement latency against 10 ... 10,000 synthetic servers."
bench_option --decisions N decisions 20000 1000 "decisions per row"
bench_parse "$@"
bench_need bench/bench_placement
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
