#!/usr/bin/env bash
# bench/chain_sites.sh - a chain of products across sites (issue 11,
# benchmark (b)): X_1 = A B_1, X_2 = X_1 B_2, ..., only X_K needed, as one
# transaction block with the intermediates kept on the servers (forwarded
# server to server: NINF_FORWARD=1) against the same block returning every
# intermediate through the client (NINF_FORWARD=0). Time, and the bytes
# that crossed the client's link (its interface counters).
#
#   bash bench/chain_sites.sh BUILD_DIR [--out FILE] [--n N] [--lengths "3 8"]
#                             [--rounds R] [--rate RATE] [--server-rate RATE]
#
# Root (ip netns, tc). Topology, every address inside namespaces made here:
#
#   ninfc-client (bench_chain) 10.79.0.1 --RATE (the slow link)-- 10.79.0.2
#   ninfc-hub: a router, and ninf-meta
#     10.79.1.1 --SERVER-RATE-- 10.79.1.2 ninfc-s1   ninfd :3000
#     10.79.2.1 --SERVER-RATE-- 10.79.2.2 ninfc-s2   ninfd :3000
#     10.79.3.1 --SERVER-RATE-- 10.79.3.2 ninfc-s3   ninfd :3000
#
# Servers reach each other through the hub, never through the client's
# link. Bound, for transfers only: forwarding moves K + 1 matrices up and
# 1 down, returning moves 2K up and K down, so the speed-up tends to
# 3K / (K + 2): 1.8x for K = 3, 2.4x for K = 8.
set -euo pipefail

usage() {
  echo "usage: $0 BUILD_DIR [--out FILE] [--n N] [--lengths \"K ...\"] [--rounds R]" \
    "[--rate RATE] [--server-rate RATE]" >&2
  exit 2
}
[[ $# -ge 1 ]] || usage
build=$(cd "$1" && pwd) || usage
shift
here=$(cd "$(dirname "$0")" && pwd)
out="$here/results/chain_sites.md"
n=600
lengths="3 8"
rounds=3
rate=50mbit
server_rate=1gbit
while [[ $# -gt 0 ]]; do
  [[ $# -ge 2 ]] || usage
  case "$1" in
    --out) out=$2 ;;
    --n) n=$2 ;;
    --lengths) lengths=$2 ;;
    --rounds) rounds=$2 ;;
    --rate) rate=$2 ;;
    --server-rate) server_rate=$2 ;;
    *) usage ;;
  esac
  shift 2
done
[[ $(id -u) -eq 0 ]] || { echo "$0: must run as root (ip netns, tc)" >&2; exit 1; }
client="$build/bench/bench_chain"
[[ -x "$client" ]] || { echo "$0: $client is not built" >&2; exit 1; }

ns_client=ninfc-client
ns_hub=ninfc-hub
sites=(1 2 3)
namespaces=("$ns_client" "$ns_hub" ninfc-s1 ninfc-s2 ninfc-s3)
work=$(mktemp -d)
raw="$work/runs.txt"

# shellcheck source=bench/lib.sh
source "$here/lib.sh"
remove_sites() { remove_namespaces "${namespaces[@]}"; }
trap 'remove_sites; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

shape() {  # NAMESPACE DEVICE RATE
  tc -n "$1" qdisc add dev "$2" root tbf rate "$3" burst 64kb latency 50ms
}

remove_sites
for ns in "${namespaces[@]}"; do
  ip netns add "$ns"
  ip -n "$ns" link set lo up
done
ip netns exec "$ns_hub" sysctl -qw net.ipv4.ip_forward=1
ip link add eth0 netns "$ns_client" type veth peer name c0 netns "$ns_hub"
ip -n "$ns_client" addr add 10.79.0.1/24 dev eth0
ip -n "$ns_hub" addr add 10.79.0.2/24 dev c0
ip -n "$ns_client" link set eth0 up
ip -n "$ns_hub" link set c0 up
ip -n "$ns_client" route add default via 10.79.0.2
shape "$ns_client" eth0 "$rate"
shape "$ns_hub" c0 "$rate"
for i in "${sites[@]}"; do
  ip link add "s$i" netns "$ns_hub" type veth peer name eth0 netns "ninfc-s$i"
  ip -n "$ns_hub" addr add "10.79.$i.1/24" dev "s$i"
  ip -n "ninfc-s$i" addr add "10.79.$i.2/24" dev eth0
  ip -n "$ns_hub" link set "s$i" up
  ip -n "ninfc-s$i" link set eth0 up
  ip -n "ninfc-s$i" route add default via "10.79.$i.1"
  shape "$ns_hub" "s$i" "$server_rate"
  shape "ninfc-s$i" eth0 "$server_rate"
done

ip netns exec "$ns_hub" "$build/metaserver/ninf-meta" --port 0 --ready-file "$work/meta.ready" \
  --listen 0.0.0.0 --insecure --report-ms 500 --lease-ms 3000 --log-level warn 2>"$work/meta.log" &
wait_file "$work/meta.ready"
meta_port=$(head -n1 "$work/meta.ready")
for i in "${sites[@]}"; do
  ip netns exec "ninfc-s$i" "$build/server/ninfd" --port 3000 --ready-file "$work/s$i.ready" \
    --registry "$build/stubs/registry" --unix-socket "" --slots 1 --thread-budget fixed \
    --threads-per-job 1 --listen "10.79.$i.2" --insecure --metaserver "10.79.$i.1:$meta_port" \
    --site "s$i" --advertise "10.79.$i.2:3000" --log-level warn 2>"$work/s$i.log" &
  wait_file "$work/s$i.ready"
done
for _ in $(seq 100); do
  ip netns exec "$ns_hub" "$build/metaserver/ninf-meta" --status --server "127.0.0.1:$meta_port" |
    grep -qx "servers:3" && break
  sleep 0.1
done

counter() { ip netns exec "$ns_client" cat "/sys/class/net/eth0/statistics/$1"; }

# One block: prints its line with the bytes the client's link carried.
run_chain() {  # FORWARD LENGTH
  local up0 down0 line
  up0=$(counter tx_bytes)
  down0=$(counter rx_bytes)
  line=$(ip netns exec "$ns_client" env "NINF_METASERVER=10.79.0.2:$meta_port" NINF_SITE=client \
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
