#!/usr/bin/env bash
# The Ninf study's Fig. 6 (4.2.2): Linpack's aggregate performance on one SMP
# server over clients c x threads per call t, with every call given t
# threads (`fixed t`, 16 slots, so nothing queues and c x t threads compete
# for the cores), next to the default `adaptive` budget at the same c.
# Closed-loop clients (interval 0), dgesv n x n; --rounds alternate the same
# points. Writes FILE (tables) and FILE's .png (the heat map of round 1).
#
#   bash bench/loadtest_surface.sh BUILD_DIR [--out FILE] [--quick] [--size N]
#       [--threads LIST] [--clients LIST] [--duration S] [--rounds N]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file, and the default is a
# new bench/results/loadtest_surface-DATE.md.)
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_declare loadtest_surface "Linpack over clients x threads per call (Fig. 6), next to adaptive."
bench_option --size N size 1000 600 "dgesv n"
bench_option --threads LIST threads "1 2 4" "1 2" "threads per call under fixed t"
bench_option --clients LIST clients "1 2 4 8 16" "1 2" "client counts c"
bench_option --duration S duration 5 2 "seconds per point"
bench_option --rounds N rounds 2 1 "repeats of the same points"
bench_parse "$@"
bench_need server/ninfd loadtest/ninf-loadtest stubs/registry/dgesv

# point LABEL ROUND NINFD-ARGS...: every c of --clients against one fresh ninfd.
point() {
  local label=$1 round=$2
  shift 2
  start_daemon -- "$@" --unix-socket ""
  for c in $clients; do
    "$build/loadtest/ninf-loadtest" --server "127.0.0.1:$port" --workload linpack --size "$size" \
      --clients "$c" --interval 0 --duration "$duration" -q --label "$label" \
      --summary "$work/summary-$round.csv" --table "$work/table.md" > /dev/null ||
      echo "$0: a call failed: $label c=$c round $round" >&2
  done
  stop_daemon
}
for round in $(seq "$rounds"); do
  for t in $threads; do
    echo "$0: round $round, fixed t=$t" >&2
    point "fixed t=$t" "$round" --slots 16 --thread-budget fixed --threads-per-job "$t"
  done
  echo "$0: round $round, adaptive" >&2
  point adaptive "$round" --thread-budget adaptive
done

plotted=yes
/usr/bin/python3 "$here/../loadtest/plot.py" surface "$work/summary-1.csv" "${out%.md}.png" ||
  { plotted=""; echo "$0: no plot (python3-matplotlib missing?)" >&2; }
{
  echo "# Linpack over clients x threads per call (the Ninf study's Fig. 6)"
  echo
  echo "\`bash bench/loadtest_surface.sh $(basename "$build") --size $size --threads \"$threads\" --clients \"$clients\" --duration $duration --rounds $rounds\`"
  echo "on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
  echo "$(date -u +%Y-%m-%d), $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'). One ninfd on loopback; \`fixed t=N\`: 16 slots, every"
  echo "call N threads; \`adaptive\`: the default budget. Closed-loop clients, dgesv n = $size,"
  echo "every answer checked, $duration s per point. Aggregate GF/s:"
  echo
  /usr/bin/python3 "$here/report.py" gflops "$work" "$rounds" "$clients"
  echo
  [ -z "$plotted" ] || { echo "Heat map of round 1: \`$(basename "${out%.md}.png")\`."; echo; }
  echo "Every run, in the Ninf study's table form:"
  echo
  cat "$work/table.md"
} >"$out"
echo "$0: wrote $out" >&2
