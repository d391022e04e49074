#!/usr/bin/env bash
# WAN Linpack, one site against four (issue 10; the Ninf study's Fig. 8,
# 4.2.4): a server in the hub of emulated sites (ninf-sites), every site
# behind its own link of --rate with --delay ms each way; closed-loop
# clients calling dgesv at each n of --sizes, for each c of --per-site:
#   one site, c clients         (the study's single-site run, ETL-Ocha-U)
#   one site, 4c clients        (the same total behind one link)
#   four sites, c clients each  (the study's multi-site run)
# then aggregate GF/s, aggregate MB/s over the links, per-call MB/s and the
# server's utilization, per round (--rounds, alternating the same runs).
# The study: per-link throughput fell only 9-18 % (c = 1) and 18-44 %
# (c = 4) with four sites sending, so the aggregate far exceeded one link's,
# while the server's CPU stayed at 20-34 %: bandwidth, not server load,
# limits Linpack over WAN.
#
# Usage: bash bench/loadtest_sites.sh [--sizes "600 1000"] [--per-site "1 4"]
#            [--rate 40mbit] [--delay 10] [--duration 10] [--rounds 2] [--out FILE]
# Root (network namespaces). Also writes FILE's .png (the Fig. 8 bars).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
sizes="600 1000"
per_site="1 4"
rate=40mbit
delay=10
duration=10
rounds=2
out=bench/results/loadtest_sites.md
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --per-site) per_site=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --delay) delay=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--sizes LIST] [--per-site LIST] [--rate R] [--delay MS] [--duration S] [--rounds N] [--out FILE]" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "$0: must run as root (ninf-sites)" >&2; exit 1; }
[ -x "$build/loadtest/ninf-loadtest" ] || bash scripts/build.sh >&2
sites=$build/sites/ninf-sites
set_name=fig8$$
work=$(mktemp -d /tmp/ninf-bench-sites.XXXXXX)
cleanup() {
  "$sites" down "$set_name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$sites" up "$set_name" --forward 3000 \
  --site a:"$rate":"$delay" --site b:"$rate":"$delay" --site c:"$rate":"$delay" --site d:"$rate":"$delay" >&2
"$sites" exec "$set_name" hub "$build/server/ninfd" --port 3000 --listen 0.0.0.0 --insecure \
  --unix-socket "" --registry "$build/stubs/registry" --ready-file "$work/ready" \
  --log-level warn 2>>"$work/ninfd.log" &
for _ in $(seq 100); do [ -s "$work/ready" ] && break; sleep 0.1; done
[ -s "$work/ready" ] || { echo "$0: ninfd did not start: $(cat "$work/ninfd.log")" >&2; exit 1; }
ns() { "$sites" netns "$set_name" "$1"; }
one_site=(--netns "$(ns a)")
four_sites=(--netns "$(ns a)" --netns "$(ns b)" --netns "$(ns c)" --netns "$(ns d)")

# run LABEL N CLIENTS ROUND NETNS...: one point, its calls in LABEL-N-CLIENTS-ROUND.csv.
run() {
  local label=$1 n=$2 c=$3 round=$4
  shift 4
  "$sites" exec "$set_name" hub "$build/loadtest/ninf-loadtest" --server 127.0.0.1:3000 "$@" \
    --workload linpack --size "$n" --clients "$c" --interval 0 --duration "$duration" -q \
    --label "$label" --summary "$work/summary-$round.csv" --table "$work/table.md" \
    --csv "$work/$label-$n-$c-$round.csv" >/dev/null ||
    echo "$0: a call failed: $label n=$n c=$c round $round" >&2
}

# once LABEL N CLIENTS ROUND NETNS...: run, unless that point has run (one
# site with 4 x 1 clients is also one site with c = 4).
once() {
  [ -e "$work/$1-$2-$3-$4.csv" ] || run "$@"
}
for round in $(seq "$rounds"); do
  for n in $sizes; do
    for c in $per_site; do
      echo "$0: round $round, n = $n, c = $c per site" >&2
      once one-site "$n" "$c" "$round" "${one_site[@]}"
      once one-site "$n" $((4 * c)) "$round" "${one_site[@]}"
      once four-sites "$n" $((4 * c)) "$round" "${four_sites[@]}"
    done
  done
done

mkdir -p "$(dirname "$out")"
plotted=yes
/usr/bin/python3 loadtest/plot.py sites "$work/summary-1.csv" "${out%.md}.png" 2>/dev/null ||
  { plotted=""; echo "$0: no plot (python3-matplotlib missing?)" >&2; }
{
  echo "# WAN Linpack: clients in one site against four (the Ninf study's Fig. 8)"
  echo
  echo "\`bash bench/loadtest_sites.sh --sizes \"$sizes\" --per-site \"$per_site\" --rate $rate --delay $delay --duration $duration --rounds $rounds\`"
  echo "on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
  echo "$(date -u +%Y-%m-%d), $(git rev-parse --short HEAD 2>/dev/null || echo '?'). One ninfd (default adaptive budget) in the hub of"
  echo "four emulated sites (\`ninf-sites\`), each behind its own $rate link with $delay ms added each way;"
  echo "closed-loop clients, dgesv n x n, every answer checked, $duration s per point."
  echo
  /usr/bin/python3 bench/report.py sites "$work" "$rounds" "$sizes" "$per_site"
  echo
  if [ -n "$plotted" ]; then
    echo "Plot of round 1: \`$(basename "${out%.md}.png")\` (aggregate GF/s per run at each total c)."
    echo
  fi
  echo "Every run, in the Ninf study's table form:"
  echo
  cat "$work/table.md"
} >"$out"
echo "$0: wrote $out" >&2
