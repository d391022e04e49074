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
# Usage: bash bench/loadtest_budgets.sh [--sizes "600 1000"] [--clients "1 2 4 8 16"]
#            [--budgets "fixed split adaptive"] [--interval S] [--probability P]
#            [--duration SECONDS] [--out FILE]
# Run twice and commit both (these machines are noisy).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
sizes="1000"
clients="1 2 4 8 16"
duration=6
budgets="fixed split adaptive"
interval=0
probability=1
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --budgets) budgets=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --probability) probability=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--sizes LIST] [--clients LIST] [--budgets LIST] [--interval S] [--probability P] [--duration S] [--out FILE]" >&2; exit 2 ;;
  esac
done
[ -x "$build/loadtest/ninf-loadtest" ] || bash scripts/build.sh >&2
work=$(mktemp -d /tmp/ninf-bench-budgets.XXXXXX)
source bench/lib.sh
trap bench_cleanup EXIT

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

if [ -n "$out" ]; then
  /usr/bin/python3 loadtest/plot.py perf "$summary" "${out%.md}.png" ||
    echo "$0: no plot (python3-matplotlib missing?)" >&2
fi
{
  echo "# Linpack load test: thread budgets on one server"
  echo
  echo "\`bash bench/loadtest_budgets.sh --sizes \"$sizes\" --clients \"$clients\" --budgets \"$budgets\" --interval $interval --probability $probability --duration $duration\`"
  echo "on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
  echo "$(date -u +%Y-%m-%d), $(git rev-parse --short HEAD 2>/dev/null || echo '?'). Clients call every $interval s with probability $probability (interval 0: closed loop), dgesv n x n with one right-hand"
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
  [ -z "$out" ] || { echo "Plot: \`$(basename "${out%.md}.png")\` (aggregate GF/s against c, per budget and n)."; echo; }
  echo "Every run, in the Ninf study's table form:"
  echo
  cat "$work/table.md"
} > "${out:-/dev/stdout}"
