#!/usr/bin/env bash
# bench/block_sites.sh - transaction blocks across sites (issue 11,
# benchmark (a)): a block of K independent dmmul on three servers against
# the same K calls one by one, every call placed by ninf-meta.
#
#   bash bench/block_sites.sh BUILD_DIR [--out FILE] [--n N] [--calls K]
#                             [--rounds R] [--rate RATE]
#
# Root (ip netns, tc). Topology, every address inside namespaces made here:
#
#         ninfk-client: ninf-meta, bench_block (NINF_METASERVER, TCP)
#          10.78.1.1 k1       10.78.2.1 k2       10.78.3.1 k3
#              | tbf RATE         | tbf RATE         | tbf RATE   (both ends)
#          10.78.1.2          10.78.2.2          10.78.3.2
#          ninfk-s1           ninfk-s2           ninfk-s3
#          ninfd :3000, 1 slot, 1 thread per call, each its own site
#
# A dmmul of n = 600 moves 3 x 2.9 MB over its server's link: ~0.75 s at
# 100 Mbit/s, against ~0.1 s of computing. Sequential calls pay every
# transfer in turn; the block runs three at once, one per link, so its
# bound is ceil(K / 3) calls' time: 8 / 3 = 2.67x for K = 8. A warm-up
# block first lets ninf-meta probe the links and the servers start their
# executables, so that no round pays for that.
set -euo pipefail

usage() {
  echo "usage: $0 BUILD_DIR [--out FILE] [--n N] [--calls K] [--rounds R] [--rate RATE]" >&2
  exit 2
}
[[ $# -ge 1 ]] || usage
build=$(cd "$1" && pwd) || usage
shift
here=$(cd "$(dirname "$0")" && pwd)
out="$here/results/block_sites.md"
n=600
calls=8
rounds=4
rate=100mbit
while [[ $# -gt 0 ]]; do
  [[ $# -ge 2 ]] || usage
  case "$1" in
    --out) out=$2 ;;
    --n) n=$2 ;;
    --calls) calls=$2 ;;
    --rounds) rounds=$2 ;;
    --rate) rate=$2 ;;
    *) usage ;;
  esac
  shift 2
done
[[ $(id -u) -eq 0 ]] || { echo "$0: must run as root (ip netns, tc)" >&2; exit 1; }
client="$build/bench/bench_block"
[[ -x "$client" ]] || { echo "$0: $client is not built" >&2; exit 1; }

ns_client=ninfk-client
sites=(1 2 3)
namespaces=("$ns_client" ninfk-s1 ninfk-s2 ninfk-s3)
work=$(mktemp -d)
raw="$work/rounds.txt"

# shellcheck source=bench/lib.sh
source "$here/lib.sh"
remove_sites() { remove_namespaces "${namespaces[@]}"; }
trap 'remove_sites; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

remove_sites
ip netns add "$ns_client"
ip -n "$ns_client" link set lo up
for i in "${sites[@]}"; do
  ip netns add "ninfk-s$i"
  ip -n "ninfk-s$i" link set lo up
  ip link add "k$i" netns "$ns_client" type veth peer name eth0 netns "ninfk-s$i"
  ip -n "$ns_client" addr add "10.78.$i.1/24" dev "k$i"
  ip -n "ninfk-s$i" addr add "10.78.$i.2/24" dev eth0
  ip -n "$ns_client" link set "k$i" up
  ip -n "ninfk-s$i" link set eth0 up
  tc -n "$ns_client" qdisc add dev "k$i" root tbf rate "$rate" burst 64kb latency 50ms
  tc -n "ninfk-s$i" qdisc add dev eth0 root tbf rate "$rate" burst 64kb latency 50ms
done

ip netns exec "$ns_client" "$build/metaserver/ninf-meta" --port 0 --ready-file "$work/meta.ready" \
  --listen 0.0.0.0 --insecure --report-ms 500 --lease-ms 3000 --log-level warn 2>"$work/meta.log" &
wait_file "$work/meta.ready"
meta_port=$(head -n1 "$work/meta.ready")
for i in "${sites[@]}"; do
  ip netns exec "ninfk-s$i" "$build/server/ninfd" --port 3000 --ready-file "$work/s$i.ready" \
    --registry "$build/stubs/registry" --unix-socket "" --slots 1 --thread-budget fixed \
    --threads-per-job 1 --listen "10.78.$i.2" --insecure --metaserver "10.78.$i.1:$meta_port" \
    --site "s$i" --advertise "10.78.$i.2:3000" --log-level warn 2>"$work/s$i.log" &
  wait_file "$work/s$i.ready"
done
for _ in $(seq 100); do
  ip netns exec "$ns_client" "$build/metaserver/ninf-meta" --status --server "127.0.0.1:$meta_port" |
    grep -qx "servers:3" && break
  sleep 0.1
done

run_client() {
  ip netns exec "$ns_client" env "NINF_METASERVER=127.0.0.1:$meta_port" NINF_SITE=client \
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
