#!/usr/bin/env bash
# FCFS against SJF on one server (issue 10; the Ninf study, 5.2: FCFS makes
# the mean response time long when small and large jobs mix, and proposes
# Shortest-Job-First from the IDL's complexity). Clients in the study's
# model (every --interval s each calls with --probability p) call dgesv at
# a small and a large size (--sizes, weights --mix); the same calls (same
# clients, steps and seeds) run under queue_order fcfs and under sjf with
# each aging factor of --aging (sjf_aging; 1000 is SJF all but without
# aging), --rounds times, in that order, each on a fresh ninfd.
# Then: mean and p95 T_response of all calls and per size, T_wait per size,
# and the per-job comparison the target names: no job waits more than twice
# its FCFS wait (jobs paired by client and step, which make the same call).
#
# Usage: bash bench/loadtest_sjf.sh [--sizes "300,2500"] [--mix "4,1"] [--clients 8]
#            [--interval 0.2] [--probability 0.5] [--steps 300] [--rounds 2] [--aging "1 8 1000"]
#            [--server-args "--slots 1"] [--out FILE]
#
# The server runs one job at a time by default (--slots 1; each job gets
# every core): a single queue, where the order is all that differs. With
# several slots a small call that arrives while a large one holds the cores
# waits for that call, not for the queue, and no order helps it.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
sizes="300,2500"
mix="4,1"
clients=8
interval=0.2
probability=0.5
steps=300
rounds=2
aging="1 8 1000"
server_args="--slots 1"
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --mix) mix=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --probability) probability=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --aging) aging=$2; shift 2 ;;
    --server-args) server_args=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--sizes A,B] [--mix WA,WB] [--clients C] [--interval S] [--probability P] [--steps N] [--rounds R] [--aging LIST] [--server-args ARGS] [--out FILE]" >&2; exit 2 ;;
  esac
done
[ -x "$build/loadtest/ninf-loadtest" ] || bash scripts/build.sh >&2
work=$(mktemp -d /tmp/ninf-bench-sjf.XXXXXX)
source bench/lib.sh
trap bench_cleanup EXIT

variants="fcfs"
for a in $aging; do variants="$variants sjf-$a"; done
for round in $(seq "$rounds"); do
  for variant in $variants; do
    order=${variant%%-*}
    order_args=(--queue-order "$order")
    [ "$order" = sjf ] && order_args+=(--sjf-aging "${variant#sjf-}")
    # shellcheck disable=SC2086
    start_daemon -- "${order_args[@]}" --unix-socket "" $server_args
    "$build/loadtest/ninf-loadtest" --server "127.0.0.1:$port" --workload linpack \
      --size "$sizes" --mix "$mix" --clients "$clients" --interval "$interval" \
      --probability "$probability" --steps "$steps" -q --label "$variant round $round" \
      --csv "$work/$variant-$round.csv" --table "$work/table.md" > "$work/$variant-$round.txt" ||
      echo "$0: a call failed under $variant, round $round" >&2
    stop_daemon
  done
done

{
  echo "# FCFS against SJF: mixed small and large dgesv on one server"
  echo
  echo "\`bash bench/loadtest_sjf.sh --sizes \"$sizes\" --mix \"$mix\" --clients $clients --interval $interval --probability $probability --steps $steps --rounds $rounds --aging \"$aging\" --server-args \"$server_args\"\`"
  echo "on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
  echo "$(date -u +%Y-%m-%d), $(git rev-parse --short HEAD 2>/dev/null || echo '?'). $clients clients; every $interval s each calls"
  echo "dgesv with probability $probability, n one of $sizes (weights $mix), $steps ticks. Every"
  echo "round runs the same calls under fcfs, then sjf with sjf_aging = each of $aging (sjf-A"
  echo "below), each on a fresh ninfd \`$server_args\` (default adaptive budget). Seconds;"
  echo "T_wait is the server's queueing time of the call."
  echo
  # shellcheck disable=SC2086
  /usr/bin/python3 bench/report.py sjf "$work" "$rounds" $variants
  echo
  echo "Every run, in the Ninf study's table form:"
  echo
  cat "$work/table.md"
} > "${out:-/dev/stdout}"
