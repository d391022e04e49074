#!/usr/bin/env bash
# What ninf-loadtest itself costs (issue 10's target: under 2 % of a core
# per 10 clients). EP with 2^--m pairs (a few ms of server work, so the
# machine is not the limit) against one local ninfd, in the study's client
# model (--interval 3 s, probability 1/2) and a 10x faster one, c of
# --clients; the tool's own CPU line: the collector (sampling the server,
# gathering rows) and the client processes (their argument data, answer
# checks and the client library itself, i.e. an upper bound on the tool's
# part). --rounds repeat the same points.
#
#   bash bench/loadtest_cpu.sh BUILD_DIR [--out FILE] [--quick] [--m M]
#       [--clients LIST] [--intervals LIST] [--duration S] [--rounds N]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file, and the default is a
# new bench/results/loadtest_cpu-DATE.md.)
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_declare loadtest_cpu "What ninf-loadtest itself costs: its CPU per 10 clients."
bench_option --m M m 16 "" "EP with 2^M pairs"
bench_option --clients LIST clients "10 20" 10 "client counts c"
bench_option --intervals LIST intervals "3 0.3" 0.3 "seconds between a client's calls"
bench_option --duration S duration 30 3 "seconds per point"
bench_option --rounds N rounds 2 1 "repeats of the same points"
bench_parse "$@"
bench_need server/ninfd loadtest/ninf-loadtest stubs/registry/ep

start_daemon -- --unix-socket ""
rows=$work/rows.md
for round in $(seq "$rounds"); do
  for s in $intervals; do
    for c in $clients; do
      echo "$0: round $round, interval $s, c = $c" >&2
      "$build/loadtest/ninf-loadtest" --server "127.0.0.1:$port" --workload ep --size "$m" \
        --clients "$c" --interval "$s" --probability 0.5 --duration "$duration" -q \
        --summary "$work/summary.csv" > "$work/out.txt" || echo "$0: a call failed" >&2
      calls=$(awk -F, 'END { print $5 }' "$work/summary.csv")
      # "tool CPU: collector X s (P% of a core), clients Y s (Q%: ...) in W s"
      sed -n 's/^tool CPU: collector [0-9.]* s (\([0-9.]*\)% of a core), clients [0-9.]* s (\([0-9.]*\)%.*/\1 \2/p' \
        "$work/out.txt" | awk -v r="$round" -v s="$s" -v c="$c" -v n="$calls" '{
          per10 = ($1 + $2) * 10 / c
          printf "| %d | %s | %d | %d | %.2f | %.2f | %.2f | %s |\n", r, s, c, n, $1, $2, per10,
            (per10 < 2 ? "met" : "not met")
        }' >> "$rows"
    done
  done
done
stop_daemon

{
  echo "# What ninf-loadtest itself costs"
  echo
  echo "\`bash bench/loadtest_cpu.sh $(basename "$build") --m $m --clients \"$clients\" --intervals \"$intervals\" --duration $duration --rounds $rounds\`"
  echo "on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
  echo "$(date -u +%Y-%m-%d), $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'). EP with 2^$m pairs against one local ninfd, clients calling"
  echo "every s seconds with probability 1/2, $duration s per point; % of one core over the run's wall time."
  echo "Clients: the client processes' whole CPU, the Ninf client library included."
  echo
  echo "| round | s | c | calls | collector % | clients % | (collector + clients) per 10 clients % | target < 2 % |"
  echo "|---|---|---|---|---|---|---|---|"
  cat "$rows"
} >"$out"
echo "$0: wrote $out" >&2
