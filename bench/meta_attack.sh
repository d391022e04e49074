#!/usr/bin/env bash
# bench/meta_attack.sh - ninf-meta under attack (issue 28): good clients'
# placement latency p50 / p99 and correctness (placed first on their truly
# best server) with ninf-meta quiet, then while hostile peers run the H6
# (forged PROBED/OUTCOME for the good clients' site, made-up tickets), H7
# (LOADs of 5,000 new function names) and H9 (PROBED with a new site name
# each) attacks at fixed rates; each phase against a fresh ninf-meta, for
# --rounds rounds. bench/meta_attack.cc's header describes the clients and
# the attacks. Written up as bench/results/meta_attack-DATE.md (raw log
# next to it). Target: p99 under attack <= 2 x quiet, correctness unchanged.
#
#   bash bench/meta_attack.sh BUILD_DIR [--out FILE] [--quick] [--seconds S]
#       [--clients N] [--rounds N] [--h6-rate R] [--h7-rate R] [--h9-rate R]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file.)
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_declare meta_attack "Good clients' placements at ninf-meta, quiet and under the H6, H7, H9 attacks."
bench_option --seconds S seconds 10 3 "seconds measured per phase"
bench_option --clients N clients 2 "" "good clients (closed loop, one connection each)"
bench_option --rounds N rounds 2 1 "rounds of quiet + attack"
bench_option --h6-rate R h6_rate 500 "" "forged PROBED/OUTCOME per second"
bench_option --h7-rate R h7_rate 20 "" "LOADs of 5,000 names per second"
bench_option --h9-rate R h9_rate 2000 "" "PROBED with a new site name per second"
bench_parse "$@"
bench_need metaserver/ninf-meta bench/meta_attack

# phase NAME ATTACKS: a fresh ninf-meta, the measurement, its RSS and links.
phase() {
  local name=$1 attacks=$2 line rss links
  start_bg ninf-meta "$work/meta.ready" "$work/meta.log" "$build/metaserver/ninf-meta" \
    --port 0 --policy completion --report-ms 200 --ready-file "$work/meta.ready" --log-level error
  local pid=$bg_pid port
  port=$(head -n1 "$work/meta.ready")
  line=$("$build/bench/meta_attack" --meta "127.0.0.1:$port" --seconds "$seconds" \
    --clients "$clients" --attacks "$attacks" --h6-rate "$h6_rate" --h7-rate "$h7_rate" \
    --h9-rate "$h9_rate") || echo "$0: meta_attack reported errors ($name)" >&2
  rss=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status")
  links=$("$build/metaserver/ninf-meta" --status --server "127.0.0.1:$port" | sed -n 's/^links://p')
  echo "$line phase=$name round=$round meta_rss_kb=$rss links=$links" | tee -a "$raw_log" >&2
  bench_stop "$pid"
}

for round in $(seq "$rounds"); do
  phase quiet ""
  phase attack h6,h7,h9
done

field() { sed -n "s/.* $1=\\([^ ]*\\).*/\\1/p"; }
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
{
  echo "# ninf-meta under attack (issue 28), $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "\`bench/meta_attack.sh\` on $cpu ($(nproc) vCPUs, shared): $clients good clients in a"
  echo "closed loop (PLACE of 10 MB, then the OUTCOME of their ticket), $seconds s per phase, four"
  echo "fake servers of which s0 is every good client's best (100 MB/s against 10 MB/s). Attacks"
  echo "from other loopback addresses: H6 $h6_rate forged PROBED/OUTCOME/s claiming the good"
  echo "clients' site, H7 $h7_rate LOADs/s of 5,000 new function names, H9 $h9_rate PROBED/s with a"
  echo "new site name each. Target: p99 under attack <= 2 x quiet, correctness unchanged."
  echo
  echo "| round | phase | placements | p50 µs | p99 µs | max µs | correct | attack requests | ninf-meta RSS MB | links |"
  echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  while read -r l; do
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %s |\n' \
      "$(field round <<<"$l")" "$(field phase <<<"$l")" "$(field placements <<<"$l")" \
      "$(field p50_us <<<"$l")" "$(field p99_us <<<"$l")" "$(field max_us <<<"$l")" \
      "$(field correct <<<"$l")" "$(field attack_requests <<<"$l")" \
      "$(echo "$(field meta_rss_kb <<<"$l") / 1024" | bc -l)" "$(field links <<<"$l")"
  done <"$raw_log"
  echo
  echo "p99 under attack / quiet, per round:"
  echo
  for r in $(seq "$rounds"); do
    q=$(grep "phase=quiet round=$r " "$raw_log" | field p99_us)
    a=$(grep "phase=attack round=$r " "$raw_log" | field p99_us)
    ratio=$(echo "$a / $q" | bc -l)
    verdict=$(echo "$ratio <= 2" | bc -l)
    printf -- '- round %s: %.0f / %.0f µs = %.2f x, %s\n' "$r" "$a" "$q" "$ratio" \
      "$([[ $verdict == 1 ]] && echo met || echo "not met")"
  done
} >"$out"
echo "meta_attack.sh: wrote $out" >&2
