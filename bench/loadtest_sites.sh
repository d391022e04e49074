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
#   bash bench/loadtest_sites.sh BUILD_DIR [--out FILE] [--quick]
#       [--sizes LIST] [--per-site LIST] [--rate RATE] [--delay MS]
#       [--duration S] [--rounds N] [--admission arrival|start]
#       [--release-slot computed|result]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file, and the default is a
# new bench/results/loadtest_sites-DATE.md.)
# Root (network namespaces). Also writes FILE's .png (the Fig. 8 bars).
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_declare loadtest_sites "WAN Linpack, clients in one site against four (Fig. 8)."
bench_option --sizes LIST sizes "600 1000" 300 "dgesv sizes n"
bench_option --per-site LIST per_site "1 4" 1 "clients per site c"
bench_option --rate RATE rate 40mbit "" "each site's link (tc's spelling)"
bench_option --delay MS delay 10 "" "ms added each way on each link"
bench_option --duration S duration 10 2 "seconds per point"
bench_option --rounds N rounds 2 1 "rounds of the same points"
bench_option --admission MODE admission arrival "" "ninfd's admission: arrival or start (docs/server.md)"
bench_option --release-slot WHEN release_slot computed "" "ninfd's release_slot: computed or result"
bench_parse "$@"
bench_need_root "ninf-sites"
bench_need server/ninfd loadtest/ninf-loadtest stubs/registry/dgesv

sites_up fig8 --forward 3000 \
  --site a:"$rate":"$delay" --site b:"$rate":"$delay" --site c:"$rate":"$delay" --site d:"$rate":"$delay"
start_bg ninfd "$work/ready" "$work/ninfd.log" in_site hub "$build/server/ninfd" --port 3000 \
  --listen 0.0.0.0 --insecure --unix-socket "" --registry "$build/stubs/registry" \
  --ready-file "$work/ready" --log-level warn --admission "$admission" --release-slot "$release_slot"
ns() { site_netns "$1"; }
one_site=(--netns "$(ns a)")
four_sites=(--netns "$(ns a)" --netns "$(ns b)" --netns "$(ns c)" --netns "$(ns d)")

# run LABEL N CLIENTS ROUND NETNS...: one point, its calls in LABEL-N-CLIENTS-ROUND.csv.
run() {
  local label=$1 n=$2 c=$3 round=$4
  shift 4
  in_site hub "$build/loadtest/ninf-loadtest" --server 127.0.0.1:3000 "$@" \
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

plotted=yes
/usr/bin/python3 "$here/../loadtest/plot.py" sites "$work/summary-1.csv" "${out%.md}.png" 2>/dev/null ||
  { plotted=""; echo "$0: no plot (python3-matplotlib missing?)" >&2; }
{
  echo "# WAN Linpack: clients in one site against four (the Ninf study's Fig. 8)"
  echo
  echo "\`bash bench/loadtest_sites.sh $(basename "$build") --sizes \"$sizes\" --per-site \"$per_site\" --rate $rate --delay $delay --duration $duration --rounds $rounds --admission $admission --release-slot $release_slot\`"
  echo "on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
  echo "$(date -u +%Y-%m-%d), $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'). One ninfd (default adaptive budget) in the hub of"
  echo "four emulated sites (\`ninf-sites\`), each behind its own $rate link with $delay ms added each way;"
  echo "closed-loop clients, dgesv n x n, every answer checked, $duration s per point."
  echo
  /usr/bin/python3 "$here/report.py" sites "$work" "$rounds" "$sizes" "$per_site"
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
