#!/usr/bin/env bash
# bench/block_sites.sh - transaction blocks across sites (issue 11,
# benchmark (a)): a block of K independent dmmul on three servers against
# the same K calls one by one, every call placed by ninf-meta.
#
#   bash bench/block_sites.sh BUILD_DIR [--out FILE] [--quick] [--n N]
#       [--calls K] [--rounds R] [--rate RATE]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file, and the default is a
# new bench/results/block_sites-DATE.md.)
#
# Root (ninf-sites). Sites (ninf-sites; every address exists only inside
# the namespaces it makes for this run, ninfsite-blockPID-*):
#
#         hub: ninf-meta, bench_block (NINF_METASERVER, TCP)
#          10.79.1.1 l1       10.79.2.1 l2       10.79.3.1 l3
#              | tbf RATE         | tbf RATE         | tbf RATE   (both ends,
#              |                  |                  |  burst 64kb, no delay)
#          10.79.1.2          10.79.2.2          10.79.3.2
#          site s1            site s2            site s3
#          ninfd :3000, 1 slot, 1 thread per call, each its own site
#
# A dmmul of n = 600 moves 3 x 2.9 MB over its server's link: ~0.75 s at
# 100 Mbit/s, against ~0.1 s of computing. Sequential calls pay every
# transfer in turn; the block runs three at once, one per link, so its
# bound is ceil(K / 3) calls' time: 8 / 3 = 2.67x for K = 8. A warm-up
# block first lets ninf-meta probe the links and the servers start their
# executables, so that no round pays for that.
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_declare block_sites "Transaction blocks across sites: K independent dmmul as a block against one by one."
bench_option --n N n 600 200 "dmmul n"
bench_option --calls K calls 8 3 "calls per block"
bench_option --rounds R rounds 4 1 "rounds (the order alternates)"
bench_option --rate RATE rate 100mbit "" "each server's link (tc's spelling)"
bench_parse "$@"
bench_need_root "ninf-sites"
bench_need server/ninfd metaserver/ninf-meta bench/bench_block stubs/registry/dmmul
client="$build/bench/bench_block"
sites=(1 2 3)
raw="$work/rounds.txt"

sites_up block --site s1:"$rate":0:64kb --site s2:"$rate":0:64kb --site s3:"$rate":0:64kb
start_bg ninf-meta "$work/meta.ready" "$work/meta.log" in_site hub "$build/metaserver/ninf-meta" \
  --port 0 --ready-file "$work/meta.ready" --listen 0.0.0.0 --insecure --report-ms 500 \
  --lease-ms 3000 --log-level warn
meta_port=$(head -n1 "$work/meta.ready")
for i in "${sites[@]}"; do
  start_bg "ninfd s$i" "$work/s$i.ready" "$work/s$i.log" in_site "s$i" "$build/server/ninfd" \
    --port 3000 --ready-file "$work/s$i.ready" --registry "$build/stubs/registry" --unix-socket "" \
    --slots 1 --thread-budget fixed --threads-per-job 1 --listen "10.79.$i.2" --insecure \
    --metaserver "10.79.$i.1:$meta_port" --site "s$i" --advertise "10.79.$i.2:3000" --log-level warn
done
for _ in $(seq 100); do
  in_site hub "$build/metaserver/ninf-meta" --status --server "127.0.0.1:$meta_port" |
    grep -qx "servers:3" && break
  sleep 0.1
done

run_client() {
  in_site hub env "NINF_METASERVER=127.0.0.1:$meta_port" NINF_SITE=client \
    NINF_TRANSPORT=tcp "$client" "$@"
}
echo "block_sites.sh: warm-up" >&2
run_client --calls "$calls" --rounds 1 "$n" >/dev/null
echo "block_sites.sh: $rounds rounds of $calls x dmmul $n" >&2
run_client --calls "$calls" --rounds "$rounds" "$n" | tee "$raw" >&2

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" "$raw"; }
{
  echo "# Transaction blocks across sites (issue 11, benchmark a), $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "\`bash bench/block_sites.sh build\` on $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
  echo "($(nproc) vCPUs), commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'). Three servers, each in its"
  echo "own network namespace behind a $rate link (tbf, both directions), 1 slot and 1 thread per"
  echo "call; ninf-meta (completion policy) and the client in a fourth. Each round: $calls x dmmul"
  echo "n = $n (C = A B, $(( 3 * 8 * n * n / 1000000 )) MB per call over its link), once one by one"
  echo "(sequential), once as one transaction block; the order alternates between rounds, and the"
  echo "block's products are checked against the sequential ones. Seconds of client wall time."
  echo
  echo "| round | sequential s | block s | speed-up | where the block's calls ran |"
  echo "|---:|---:|---:|---:|---|"
  paste -d' ' <(field r) <(field sequential) <(field block) <(field ratio) <(field servers) |
    while read -r r s b x where; do echo "| $r | $s | $b | ${x}x | ${where//,/, } |"; done
  echo
  # The bound: three links at once, so ceil(K / 3) calls' time for K.
  field ratio | sort -g | awk -v k="$calls" '{ v[NR] = $1 } END {
    rounds_of_three = int((k + 2) / 3)
    printf "Speed-up: median %.2fx, min %.2fx, max %.2fx over %d rounds (target >= 2.5x; bound %d / %d = %.2fx).\n",
      v[int((NR + 1) / 2)], v[1], v[NR], NR, k, rounds_of_three, k / rounds_of_three }'
} >"$out"
echo "block_sites.sh: wrote $out" >&2
