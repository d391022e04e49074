#!/usr/bin/env bash
# The metaserver's placement policies as a load test (issue 10, proving
# issue 9's point under load; the Ninf study: placement by server load alone
# fails for Linpack over unequal links). Two emulated sites (ninf-sites):
# s1 behind --slow-rate, s2 behind --fast-rate, a ninfd in each (one slot,
# one thread per call, pinned to its own core, so the servers compute alike
# and differ only in their links); ninf-meta and closed-loop clients in the
# hub, every call placed by ninf-meta (ninf-loadtest --metaserver). Per
# policy a fresh ninf-meta and fresh ninfds; for each c of --clients,
# dgesv n = --size; --rounds repeat the same points.
#
# Usage: bash bench/loadtest_meta.sh [--size 1000] [--clients "1 2 4 8"]
#            [--policies "completion load round-robin"] [--slow-rate 100mbit]
#            [--fast-rate 1gbit] [--duration 10] [--rounds 2] [--out FILE]
# Root (network namespaces); 2 cores or more.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
size=1000
clients="1 2 4 8"
policies="completion load round-robin"
slow=100mbit
fast=1gbit
duration=10
rounds=2
out=bench/results/loadtest_meta.md
while [ $# -gt 0 ]; do
  case "$1" in
    --size) size=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --slow-rate) slow=$2; shift 2 ;;
    --fast-rate) fast=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--size N] [--clients LIST] [--policies LIST] [--slow-rate R] [--fast-rate R] [--duration S] [--rounds N] [--out FILE]" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "$0: must run as root (ninf-sites)" >&2; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "$0: needs 2 cores (one per server)" >&2; exit 1; }
[ -x "$build/loadtest/ninf-loadtest" ] || bash scripts/build.sh >&2
sites=$build/sites/ninf-sites
set_name=meta$$
work=$(mktemp -d /tmp/ninf-bench-meta.XXXXXX)
pids=()
stop_all() {
  [ ${#pids[@]} -eq 0 ] || { kill -TERM "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; }
  pids=()
}
cleanup() {
  stop_all
  "$sites" down "$set_name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_file FILE WHAT PID: until FILE has content; fails if PID dies first.
wait_file() {
  for _ in $(seq 100); do
    [ -s "$1" ] && return 0
    kill -0 "$3" 2>/dev/null || { echo "$0: $2 died: $(tail -n 5 "$work"/*.log)" >&2; exit 1; }
    sleep 0.1
  done
  echo "$0: $2 did not start" >&2
  exit 1
}

# start POLICY: ninf-meta in the hub, a ninfd in each site registered with it.
start() {
  rm -f "$work"/*.ready
  "$sites" exec "$set_name" hub "$build/metaserver/ninf-meta" --port 0 --listen 0.0.0.0 --insecure \
    --policy "$1" --report-ms 500 --ready-file "$work/meta.ready" --log-level warn 2>>"$work/meta.log" &
  pids+=($!)
  wait_file "$work/meta.ready" ninf-meta "$!"
  meta_port=$(head -n1 "$work/meta.ready")
  local i
  for i in 1 2; do
    "$sites" exec "$set_name" "s$i" taskset -c $((i - 1)) "$build/server/ninfd" --port 3000 \
      --listen "10.79.$i.2" --advertise "10.79.$i.2:3000" --insecure --unix-socket "" \
      --registry "$build/stubs/registry" --slots 1 --thread-budget fixed --threads-per-job 1 \
      --metaserver "10.79.$i.1:$meta_port" --site "s$i" --ready-file "$work/s$i.ready" \
      --log-level warn 2>>"$work/s$i.log" &
    pids+=($!)
    wait_file "$work/s$i.ready" "ninfd s$i" "$!"
  done
  for _ in $(seq 100); do
    "$sites" exec "$set_name" hub "$build/metaserver/ninf-meta" --status \
      --server "127.0.0.1:$meta_port" 2>/dev/null | grep -qx "servers:2" && return 0
    sleep 0.1
  done
  echo "$0: the servers did not register with ninf-meta" >&2
  exit 1
}

"$sites" up "$set_name" --site s1:"$slow":0 --site s2:"$fast":0 >&2
for round in $(seq "$rounds"); do
  for policy in $policies; do
    echo "$0: round $round, $policy" >&2
    start "$policy"
    for c in $clients; do
      "$sites" exec "$set_name" hub env NINF_TRANSPORT=tcp "$build/loadtest/ninf-loadtest" \
        --metaserver "127.0.0.1:$meta_port" --sample 10.79.1.2:3000 --sample 10.79.2.2:3000 \
        --workload linpack --size "$size" --clients "$c" --interval 0 --duration "$duration" -q \
        --label "$policy" --summary "$work/summary-$round.csv" --table "$work/table.md" \
        --csv "$work/$policy-$c-$round.csv" >/dev/null ||
        echo "$0: a call failed: $policy c=$c round $round" >&2
    done
    stop_all
  done
done

mkdir -p "$(dirname "$out")"
{
  echo "# Placement policies under load (ninf-meta, unequal links)"
  echo
  echo "\`bash bench/loadtest_meta.sh --size $size --clients \"$clients\" --policies \"$policies\" --slow-rate $slow --fast-rate $fast --duration $duration --rounds $rounds\`"
  echo "on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
  echo "$(date -u +%Y-%m-%d), $(git rev-parse --short HEAD 2>/dev/null || echo '?'). Two emulated sites (\`ninf-sites\`): s1 behind $slow,"
  echo "s2 behind $fast; a ninfd in each (1 slot, 1 thread per call, pinned to its own core);"
  echo "ninf-meta and the clients in the hub, every call placed by ninf-meta. Closed-loop"
  echo "clients, dgesv n = $size ($((size * size * 8 / 1000000)) MB each way), every answer checked, $duration s per point."
  echo
  /usr/bin/python3 bench/report.py meta "$work" "$rounds" "$clients"
  echo
  echo "Every run, in the Ninf study's table form:"
  echo
  cat "$work/table.md"
} >"$out"
echo "$0: wrote $out" >&2
