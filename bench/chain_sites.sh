#!/usr/bin/env bash
# bench/chain_sites.sh - a chain of products across sites (issue 11,
# benchmark (b)): X_1 = A B_1, X_2 = X_1 B_2, ..., only X_K needed, as one
# transaction block with the intermediates kept on the servers (forwarded
# server to server: NINF_FORWARD=1) against the same block returning every
# intermediate through the client (NINF_FORWARD=0). Time, and the bytes
# that crossed the client's link (its interface counters).
#
#   bash bench/chain_sites.sh BUILD_DIR [--out FILE] [--quick] [--n N]
#       [--lengths K ...] [--rounds R] [--rate RATE] [--server-rate RATE]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file, and the default is a
# new bench/results/chain_sites-DATE.md.)
#
# Root (ninf-sites). Sites (ninf-sites; every address exists only inside
# the namespaces it makes for this run, ninfsite-chainPID-*), every link
# shaped at both ends (tbf, burst 64kb), no delay:
#
#   site client (bench_chain) 10.79.4.2 --RATE (the slow link)-- 10.79.4.1
#   hub: a router, and ninf-meta
#     10.79.1.1 --SERVER-RATE-- 10.79.1.2 site s1   ninfd :3000
#     10.79.2.1 --SERVER-RATE-- 10.79.2.2 site s2   ninfd :3000
#     10.79.3.1 --SERVER-RATE-- 10.79.3.2 site s3   ninfd :3000
#
# Servers reach each other through the hub, never through the client's
# link. Bound, for transfers only: forwarding moves K + 1 matrices up and
# 1 down, returning moves 2K up and K down, so the speed-up tends to
# 3K / (K + 2): 1.8x for K = 3, 2.4x for K = 8.
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_declare chain_sites "A chain of products across sites: intermediates forwarded server to server or returned."
bench_option --n N n 600 200 "dmmul n"
bench_option --lengths "K ..." lengths "3 8" 3 "chain lengths"
bench_option --rounds R rounds 3 1 "rounds per length (the order alternates)"
bench_option --rate RATE rate 50mbit "" "the client's link (tc's spelling)"
bench_option --server-rate RATE server_rate 1gbit "" "each server's link"
bench_parse "$@"
bench_need_root "ninf-sites"
bench_need server/ninfd metaserver/ninf-meta bench/bench_chain stubs/registry/dmmul
client="$build/bench/bench_chain"
sites=(1 2 3)
raw="$work/runs.txt"

# The servers first, so that site i is 10.79.i.2; the client is the fourth.
sites_up chain --site s1:"$server_rate":0:64kb --site s2:"$server_rate":0:64kb \
  --site s3:"$server_rate":0:64kb --site client:"$rate":0:64kb
client_addr=$(site_addr client)
hub_for_client=${client_addr%.2}.1
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

counter() { in_site client cat "/sys/class/net/eth0/statistics/$1"; }

# One block: prints its line with the bytes the client's link carried.
run_chain() {  # FORWARD LENGTH
  local up0 down0 line
  up0=$(counter tx_bytes)
  down0=$(counter rx_bytes)
  line=$(in_site client env "NINF_METASERVER=$hub_for_client:$meta_port" NINF_SITE=client \
    NINF_TRANSPORT=tcp "NINF_FORWARD=$1" "$client" --length "$2" "$n")
  echo "$line up=$(($(counter tx_bytes) - up0)) down=$(($(counter rx_bytes) - down0))"
}

echo "chain_sites.sh: warm-up" >&2
run_chain 1 3 >/dev/null
run_chain 0 3 >/dev/null
: >"$raw"
for k in $lengths; do
  for r in $(seq "$rounds"); do
    # The order alternates between rounds, so neither always goes first.
    if ((r % 2)); then modes="1 0"; else modes="0 1"; fi
    for f in $modes; do
      line="round=$r $(run_chain "$f" "$k")"
      echo "$line" | tee -a "$raw" >&2
    done
  done
done

matrix=$((8 * n * n))
{
  echo "# A chain of products across sites (issue 11, benchmark b), $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "\`bash bench/chain_sites.sh build\` on $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
  echo "($(nproc) vCPUs), commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'). The client behind a $rate"
  echo "link (tbf, both directions) to a hub; three servers behind $server_rate links to the hub,"
  echo "1 slot and 1 thread per call; ninf-meta (completion policy) on the hub. One transaction"
  echo "block: X_1 = A B_1, ..., X_K = X_(K-1) B_K, dmmul n = $n ($matrix bytes per matrix), only X_K"
  echo "needed (the others discarded). *forward*: intermediates stay on the servers (NINF_FORWARD=1);"
  echo "*return*: each comes back to the client and goes out again (NINF_FORWARD=0). Bytes: the"
  echo "client interface's counters (TCP/IP and protocol overhead included); *arrays* is what the"
  echo "block must move at least: K + 1 matrices up and 1 down. X_K checked against a local chain."
  echo
  echo "| K | round | forward s | return s | speed-up | forward up + down MB | return up + down MB | arrays up + down MB | servers (forward) |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---|"
  /usr/bin/python3 "$here/report.py" chain "$raw" "$matrix"
} >"$out"
echo "chain_sites.sh: wrote $out" >&2
