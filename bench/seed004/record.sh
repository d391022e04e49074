#!/usr/bin/env bash
# Runs of record of seed 004's multi-client items, on a quiet machine:
# every ITEM.sh with its defaults into bench/results/seed004/ITEM.md (run 1)
# or ITEM-run2.md (run 2), then the index's verdict column
# (bench/results/seed004/README.md) from the files.
#
#   bash bench/seed004/record.sh BUILD_DIR RUN [--duration S] [ITEM...]
#       RUN is 1 or 2; ITEMs default to all eight, shortest first (table5
#       table8 table4 table3 table7 table6 fig6 fig8). --duration S: seconds
#       per point for every item (the issue's range is 60-120; the items'
#       default is 90). Root. Each item prints its expected duration first;
#       all eight take hours.
# Tables 3 and 6 are the 1-PE halves of Tables 4 and 7 (the same set-up, the
# other server version beside): when that run's data is there they are
# rendered from its 1-PE points instead of being run again, and say so.
# A file that exists is skipped, never written over: a stopped run resumes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { echo "usage: bash bench/seed004/record.sh BUILD_DIR 1|2 [--duration S] [ITEM...]" >&2; exit 2; }
[[ $# -ge 2 && ($2 == 1 || $2 == 2) ]] || usage
build=$1 run=$2
shift 2
item_args=()
if [[ ${1:-} == --duration ]]; then
  [[ ${2:-} =~ ^[0-9]+$ ]] || usage
  item_args=(--duration "$2")
  shift 2
fi
items=("$@")
[[ ${#items[@]} -gt 0 ]] || items=(table5 table8 table4 table3 table7 table6 fig6 fig8)
results=$here/../results/seed004
suffix=""
[[ $run == 1 ]] || suffix="-run2"
declare -A whole=([table3]=table4 [table6]=table7)
for item in "${items[@]}"; do
  [[ -f $here/$item.sh ]] || { echo "$0: no bench/seed004/$item.sh" >&2; exit 2; }
  out=$results/$item$suffix.md
  if [[ -e $out ]]; then
    echo "$0: $out exists: skipped" >&2
    continue
  fi
  from=${whole[$item]:-}
  if [[ -n $from && -f $results/$from$suffix.data/points.csv ]]; then
    echo "$0: $item -> $out, from $from$suffix.data's 1-PE points" >&2
    data=$results/$from$suffix.data
    notes=$(mktemp)
    { echo "rendered from the 1-PE points of $from$suffix.md's run (the same set-up and points)"
      cat "$data/notes.txt"; } >"$notes"
    # The run's own header line (command, machine, date, commit): the
    # points are that run's, whenever they are rendered.
    IFS=$'\t' read -r cmd machine date commit < <(sed -n \
      '3s/^`\(.*\)` on \(.*\), \([0-9-]*\), commit \([^.]*\)\.$/\1\t\2\t\3\t\4/p' \
      "$results/$from$suffix.md")
    /usr/bin/python3 "$here/report.py" render "$item" "$data" --command "$cmd" \
      --plot "${out%.md}.png" --notes "$notes" --machine "$machine" --commit "$commit" \
      --date "$date" >"$out"
    rm -f "$notes"
    continue
  fi
  echo "$0: $item -> $out ($(date -u +%H:%M:%S))" >&2
  bash "$here/$item.sh" "$build" ${item_args[@]+"${item_args[@]}"} --out "$out" || echo "$0: $item failed" >&2
done
/usr/bin/python3 "$here/report.py" index "$results" --write
