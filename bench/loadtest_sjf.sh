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
#   bash bench/loadtest_sjf.sh BUILD_DIR [--out FILE] [--quick] [--sizes A,B]
#       [--mix WA,WB] [--clients C] [--interval S] [--probability P]
#       [--steps N] [--rounds N] [--aging LIST] [--server-args ARGS]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file, and the default is a
# new bench/results/loadtest_sjf-DATE.md.)
#
# The server runs one job at a time by default (--slots 1; each job gets
# every core): a single queue, where the order is all that differs. With
# several slots a small call that arrives while a large one holds the cores
# waits for that call, not for the queue, and no order helps it.
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_declare loadtest_sjf "FCFS against SJF on one server: mixed small and large dgesv."
bench_option --sizes A,B sizes 300,2500 200,600 "the small and the large n"
bench_option --mix WA,WB mix 4,1 "" "their weights"
bench_option --clients C clients 8 4 "clients"
bench_option --interval S interval 0.2 "" "seconds between a client's chances to call"
bench_option --probability P probability 0.5 "" "probability of a call at each chance"
bench_option --steps N steps 300 20 "ticks per run"
bench_option --rounds N rounds 2 1 "rounds of every variant"
bench_option --aging LIST aging "1 8 1000" 8 "sjf_aging factors, one variant each"
bench_option --server-args ARGS server_args "--slots 1" "" "ninfd arguments"
bench_parse "$@"
bench_need server/ninfd loadtest/ninf-loadtest stubs/registry/dgesv

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
  echo "\`bash bench/loadtest_sjf.sh $(basename "$build") --sizes \"$sizes\" --mix \"$mix\" --clients $clients --interval $interval --probability $probability --steps $steps --rounds $rounds --aging \"$aging\" --server-args \"$server_args\"\`"
  echo "on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
  echo "$(date -u +%Y-%m-%d), $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'). $clients clients; every $interval s each calls"
  echo "dgesv with probability $probability, n one of $sizes (weights $mix), $steps ticks. Every"
  echo "round runs the same calls under fcfs, then sjf with sjf_aging = each of $aging (sjf-A"
  echo "below), each on a fresh ninfd \`$server_args\` (default adaptive budget). Seconds;"
  echo "T_wait is the server's queueing time of the call."
  echo
  # shellcheck disable=SC2086
  /usr/bin/python3 "$here/report.py" sjf "$work" "$rounds" $variants
  echo
  echo "Every run, in the Ninf study's table form:"
  echo
  cat "$work/table.md"
} >"$out"
echo "$0: wrote $out" >&2
