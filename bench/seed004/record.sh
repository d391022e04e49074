#!/usr/bin/env bash
# Runs of record of seed 004's multi-client items, on a quiet machine:
# every ITEM.sh with its defaults into bench/results/seed004/ITEM.md (run 1)
# or ITEM-run2.md (run 2), then the index's verdict column
# (bench/results/seed004/README.md) from the files.
#
#   bash bench/seed004/record.sh BUILD_DIR RUN [ITEM...]
#       RUN is 1 or 2; ITEMs default to all eight (table3 table4 table5 fig6
#       table6 table7 fig8 table8). Root. Each item prints its expected
#       duration first; all eight take hours with the defaults.
# A file that exists is skipped, never written over: a stopped run resumes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[[ $# -ge 2 && ($2 == 1 || $2 == 2) ]] || {
  echo "usage: bash bench/seed004/record.sh BUILD_DIR 1|2 [ITEM...]" >&2
  exit 2
}
build=$1 run=$2
shift 2
items=("$@")
[[ ${#items[@]} -gt 0 ]] || items=(table3 table4 table5 fig6 table6 table7 fig8 table8)
results=$here/../results/seed004
suffix=""
[[ $run == 1 ]] || suffix="-run2"
for item in "${items[@]}"; do
  [[ -x $here/$item.sh || -f $here/$item.sh ]] || { echo "$0: no bench/seed004/$item.sh" >&2; exit 2; }
  out=$results/$item$suffix.md
  if [[ -e $out ]]; then
    echo "$0: $out exists: skipped" >&2
    continue
  fi
  echo "$0: $item -> $out ($(date -u +%H:%M:%S))" >&2
  bash "$here/$item.sh" "$build" --out "$out" || echo "$0: $item failed" >&2
done
/usr/bin/python3 "$here/report.py" index "$results" --write
