#!/usr/bin/env bash
# Linpack multi-client load test on one server under each thread budget
# (issue 10; the Ninf study's Tables 3/4 form): closed-loop clients
# (interval 0; --interval S --probability P for the study's client model),
# c = 1, 2, 4, 8, 16, dgesv at each size n, for each of --budgets:
#   fixed    16 slots x 2 threads (the naive setting: oversubscribes, Fig. 6)
#   split    one slot per core, cores / slots threads (the old default)
#   adaptive the default (admission.h)
# then a table of aggregate GF/s per c with adaptive / best(fixed, split),
# the target being >= 0.95 at every c.
#
#   bash bench/loadtest_budgets.sh BUILD_DIR [--out FILE] [--quick]
#       [--sizes LIST] [--clients LIST] [--budgets LIST] [--interval S]
#       [--probability P] [--duration S]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file, and the default is a
# new bench/results/loadtest_budgets-DATE.md.)
# Run twice and commit both (these machines are noisy).
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_declare loadtest_budgets "Linpack load test on one server under each thread budget (Tables 3/4)."
bench_option --sizes LIST sizes 1000 600 "dgesv sizes n"
bench_option --clients LIST clients "1 2 4 8 16" "1 2" "client counts c"
bench_option --budgets LIST budgets "fixed split adaptive" "" "thread budgets"
bench_option --interval S interval 0 "" "seconds between a client's calls (0: closed loop)"
bench_option --probability P probability 1 "" "probability of a call at each interval"
bench_option --duration S duration 6 2 "seconds per point"
bench_parse "$@"
bench_need server/ninfd loadtest/ninf-loadtest stubs/registry/dgesv

declare -A budget_args=(
  [fixed]="--slots 16 --thread-budget fixed --threads-per-job 2"
  [split]="--thread-budget split"
  [adaptive]="--thread-budget adaptive"
)
summary=$work/summary.csv
for n in $sizes; do
  for budget in $budgets; do
    # shellcheck disable=SC2086
    start_daemon -- ${budget_args[$budget]} --unix-socket ""
    for c in $clients; do
      "$build/loadtest/ninf-loadtest" --server "127.0.0.1:$port" --workload linpack --size "$n" \
        --clients "$c" --interval "$interval" --probability "$probability" --duration "$duration" -q --label "$budget" \
        --summary "$summary" --table "$work/table.md" > /dev/null ||
        echo "$0: a call failed at n=$n c=$c $budget" >&2
    done
    stop_daemon
  done
done

/usr/bin/python3 "$here/../loadtest/plot.py" perf "$summary" "${out%.md}.png" ||
  echo "$0: no plot (python3-matplotlib missing?)" >&2
{
  echo "# Linpack load test: thread budgets on one server"
  echo
  echo "\`bash bench/loadtest_budgets.sh $(basename "$build") --sizes \"$sizes\" --clients \"$clients\" --budgets \"$budgets\" --interval $interval --probability $probability --duration $duration\`"
  echo "on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
  echo "$(date -u +%Y-%m-%d), $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'). Clients call every $interval s with probability $probability (interval 0: closed loop), dgesv n x n with one right-hand"
  echo "side, every answer checked; aggregate GF/s = operations of the completed calls / run time."
  echo "fixed = 16 slots x 2 threads (the naive setting), split = one slot per core x cores/slots"
  echo "threads (the former default), adaptive = the new default."
  echo
  # The target's table needs all three budgets.
  if [ "$budgets" = "fixed split adaptive" ]; then
    echo "| n | c | fixed GF/s | split GF/s | adaptive GF/s | adaptive / best | target >= 0.95 |"
    echo "|---|---|---|---|---|---|---|"
    awk -F, 'NR > 1 && $1 != "label" { g[$3 "," $4 "," $1] = $15; key[$3 "," $4] = 1 }
      END {
        for (k in key) {
          split(k, p, ",")
          f = g[k ",fixed"]; s = g[k ",split"]; a = g[k ",adaptive"]
          best = f > s ? f : s
          r = best > 0 ? a / best : 0
          printf "| %d | %d | %.2f | %.2f | %.2f | %.3f | %s |\n", p[1], p[2], f, s, a, r,
            (r >= 0.95 ? "met" : "not met")
        }
      }' "$summary" | sort -t'|' -k2,2n -k3,3n
    echo
  fi
  echo "Plot: \`$(basename "${out%.md}.png")\` (aggregate GF/s against c, per budget and n)."
  echo
  echo "Every run, in the Ninf study's table form:"
  echo
  cat "$work/table.md"
} >"$out"
echo "$0: wrote $out" >&2
