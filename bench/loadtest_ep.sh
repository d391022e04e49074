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
# Usage: bash bench/loadtest_ep.sh [--m 24] [--clients "1 2 4 8 16"]
#            [--rate 10mbit] [--delay 20] [--duration 8] [--rounds 2] [--out FILE]
# Root (network namespaces).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
m=24
clients="1 2 4 8 16"
rate=10mbit
delay=20
duration=8
rounds=2
out=bench/results/loadtest_ep.md
while [ $# -gt 0 ]; do
  case "$1" in
    --m) m=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --delay) delay=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--m M] [--clients LIST] [--rate R] [--delay MS] [--duration S] [--rounds N] [--out FILE]" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "$0: must run as root (ninf-sites)" >&2; exit 1; }
[ -x "$build/loadtest/ninf-loadtest" ] || bash scripts/build.sh >&2
sites=$build/sites/ninf-sites
set_name=ep$$
work=$(mktemp -d /tmp/ninf-bench-ep.XXXXXX)
cleanup() {
  "$sites" down "$set_name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$sites" up "$set_name" --forward 3000 --site a:"$rate":"$delay" >&2
"$sites" exec "$set_name" hub "$build/server/ninfd" --port 3000 --listen 0.0.0.0 --insecure \
  --unix-socket "" --registry "$build/stubs/registry" --ready-file "$work/ready" \
  --log-level warn 2>>"$work/ninfd.log" &
for _ in $(seq 100); do [ -s "$work/ready" ] && break; sleep 0.1; done
[ -s "$work/ready" ] || { echo "$0: ninfd did not start: $(cat "$work/ninfd.log")" >&2; exit 1; }

# run LABEL CLIENTS ROUND [--netns NS]: one point, its calls in LABEL-CLIENTS-ROUND.csv.
run() {
  local label=$1 c=$2 round=$3
  shift 3
  "$sites" exec "$set_name" hub "$build/loadtest/ninf-loadtest" --server 127.0.0.1:3000 "$@" \
    --workload ep --size "$m" --clients "$c" --interval 0 --duration "$duration" -q \
    --label "$label" --summary "$work/summary-$round.csv" --table "$work/table.md" \
    --csv "$work/$label-$c-$round.csv" >/dev/null ||
    echo "$0: a call failed: $label c=$c round $round" >&2
}
for round in $(seq "$rounds"); do
  for c in $clients; do
    echo "$0: round $round, c = $c" >&2
    run LAN "$c" "$round"
    run WAN "$c" "$round" --netns "$("$sites" netns "$set_name" a)"
  done
done

mkdir -p "$(dirname "$out")"
{
  echo "# Multi-client EP, LAN and single-site WAN (the Ninf study's Table 8)"
  echo
  echo "\`bash bench/loadtest_ep.sh --m $m --clients \"$clients\" --rate $rate --delay $delay --duration $duration --rounds $rounds\`"
  echo "on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
  echo "$(date -u +%Y-%m-%d), $(git rev-parse --short HEAD 2>/dev/null || echo '?'). One ninfd (default adaptive budget) in the hub of one"
  echo "emulated site (\`ninf-sites\`) behind a $rate link with $delay ms added each way. LAN: the"
  echo "clients in the hub, loopback TCP; WAN: the clients in the site. Closed-loop clients, NAS EP"
  echo "with 2^$m pairs (Mflops = 2^$((m + 1)) random numbers / T_response, the study's measure), every"
  echo "answer checked against NAS, $duration s per point. Communication = T_response - T_wait - routine"
  echo "time (connection, arguments, result, round trips). Jobs: the server's running + queued calls,"
  echo "the study's \"load\" (processes running or waiting on the server)."
  echo
  /usr/bin/python3 bench/report.py ep "$work" "$rounds" "$clients"
  echo
  echo "Every run, in the Ninf study's table form:"
  echo
  cat "$work/table.md"
} >"$out"
echo "$0: wrote $out" >&2
