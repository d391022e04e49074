#!/usr/bin/env bash
# Multi-client EP on LAN and on a single-site WAN (the Ninf study's Table 8,
# 4.3.1): one ninfd (default budget) in the hub of one emulated site
# (ninf-sites, link --rate with --delay ms each way); closed-loop clients
# calling NAS EP with 2^m pairs (the study: m = 24, "Sample"), c of
# --clients, once from the hub over loopback TCP (LAN) and once from the
# site through its link (WAN); --rounds alternate the same points.
# The study: performance held while c <= the server's processors (4 there),
# then fell as 1/c with utilization at 100 %; communication time small and
# constant (LAN 0.01 s, WAN 0.04 s): EP is bound by the server, not the net.
#
#   bash bench/loadtest_ep.sh BUILD_DIR [--out FILE] [--quick] [--m M]
#       [--clients LIST] [--rate RATE] [--delay MS] [--duration S]
#       [--rounds N]
#       N]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file, and the default is a
# new bench/results/loadtest_ep-DATE.md.)
# Root (network namespaces).
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_declare loadtest_ep "Multi-client EP on LAN and on a single-site WAN (Table 8)."
bench_option --m M m 24 18 "EP with 2^M pairs"
bench_option --clients LIST clients "1 2 4 8 16" "1 2" "client counts c"
bench_option --rate RATE rate 10mbit "" "the site's link (tc's spelling)"
bench_option --delay MS delay 20 "" "ms added each way on the site's link"
bench_option --duration S duration 8 2 "seconds per point"
bench_option --rounds N rounds 2 1 "rounds of the same points"
bench_parse "$@"
bench_need_root "ninf-sites"
bench_need server/ninfd loadtest/ninf-loadtest stubs/registry/ep

sites_up ep --forward 3000 --site a:"$rate":"$delay"
start_bg ninfd "$work/ready" "$work/ninfd.log" in_site hub "$build/server/ninfd" --port 3000 \
  --listen 0.0.0.0 --insecure --unix-socket "" --registry "$build/stubs/registry" \
  --ready-file "$work/ready" --log-level warn

# run LABEL CLIENTS ROUND [--netns NS]: one point, its calls in LABEL-CLIENTS-ROUND.csv.
run() {
  local label=$1 c=$2 round=$3
  shift 3
  in_site hub "$build/loadtest/ninf-loadtest" --server 127.0.0.1:3000 "$@" \
    --workload ep --size "$m" --clients "$c" --interval 0 --duration "$duration" -q \
    --label "$label" --summary "$work/summary-$round.csv" --table "$work/table.md" \
    --csv "$work/$label-$c-$round.csv" >/dev/null ||
    echo "$0: a call failed: $label c=$c round $round" >&2
}
for round in $(seq "$rounds"); do
  for c in $clients; do
    echo "$0: round $round, c = $c" >&2
    run LAN "$c" "$round"
    run WAN "$c" "$round" --netns "$(site_netns a)"
  done
done

{
  echo "# Multi-client EP, LAN and single-site WAN (the Ninf study's Table 8)"
  echo
  echo "\`bash bench/loadtest_ep.sh $(basename "$build") --m $m --clients \"$clients\" --rate $rate --delay $delay --duration $duration --rounds $rounds\`"
  echo "on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
  echo "$(date -u +%Y-%m-%d), $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'). One ninfd (default adaptive budget) in the hub of one"
  echo "emulated site (\`ninf-sites\`) behind a $rate link with $delay ms added each way. LAN: the"
  echo "clients in the hub, loopback TCP; WAN: the clients in the site. Closed-loop clients, NAS EP"
  echo "with 2^$m pairs (Mflops = 2^$((m + 1)) random numbers / T_response, the study's measure), every"
  echo "answer checked against NAS, $duration s per point. Communication = T_response - T_wait - routine"
  echo "time (connection, arguments, result, round trips). Jobs: the server's running + queued calls,"
  echo "the study's \"load\" (processes running or waiting on the server)."
  echo
  /usr/bin/python3 "$here/report.py" ep "$work" "$rounds" "$clients"
  echo
  echo "Every run, in the Ninf study's table form:"
  echo
  cat "$work/table.md"
} >"$out"
echo "$0: wrote $out" >&2
