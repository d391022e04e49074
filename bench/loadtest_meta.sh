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
#   bash bench/loadtest_meta.sh BUILD_DIR [--out FILE] [--quick] [--size N]
#       [--clients LIST] [--policies LIST] [--slow-rate RATE]
#       [--fast-rate RATE] [--duration S] [--rounds N]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file, and the default is a
# new bench/results/loadtest_meta-DATE.md.)
# Root (network namespaces); 2 cores or more.
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_declare loadtest_meta "ninf-meta's placement policies under load, two sites with unequal links."
bench_option --size N size 1000 300 "dgesv n"
bench_option --clients LIST clients "1 2 4 8" "1 2" "client counts c"
bench_option --policies LIST policies "completion load round-robin" "" "ninf-meta policies"
bench_option --slow-rate RATE slow 100mbit "" "s1's link (tc's spelling)"
bench_option --fast-rate RATE fast 1gbit "" "s2's link"
bench_option --duration S duration 10 2 "seconds per point"
bench_option --rounds N rounds 2 1 "rounds of the same points"
bench_parse "$@"
bench_need_root "ninf-sites"
[[ $(nproc) -ge 2 ]] || { echo "$0: needs 2 cores (one per server)" >&2; exit 1; }
bench_need server/ninfd metaserver/ninf-meta loadtest/ninf-loadtest stubs/registry/dgesv

# The policy's ninf-meta and ninfds, stopped before the next policy's.
pids=()
stop_all() {
  local pid
  for pid in "${pids[@]}"; do bench_stop "$pid"; done
  pids=()
}

# start POLICY: ninf-meta in the hub, a ninfd in each site registered with it.
start() {
  start_bg ninf-meta "$work/meta.ready" "$work/meta.log" in_site hub "$build/metaserver/ninf-meta" \
    --port 0 --listen 0.0.0.0 --insecure --policy "$1" --report-ms 500 \
    --ready-file "$work/meta.ready" --log-level warn
  pids+=("$bg_pid")
  meta_port=$(head -n1 "$work/meta.ready")
  local i
  for i in 1 2; do
    start_bg "ninfd s$i" "$work/s$i.ready" "$work/s$i.log" in_site "s$i" taskset -c $((i - 1)) \
      "$build/server/ninfd" --port 3000 --listen "10.79.$i.2" --advertise "10.79.$i.2:3000" \
      --insecure --unix-socket "" --registry "$build/stubs/registry" --slots 1 \
      --thread-budget fixed --threads-per-job 1 --metaserver "10.79.$i.1:$meta_port" --site "s$i" \
      --ready-file "$work/s$i.ready" --log-level warn
    pids+=("$bg_pid")
  done
  for _ in $(seq 100); do
    in_site hub "$build/metaserver/ninf-meta" --status \
      --server "127.0.0.1:$meta_port" 2>/dev/null | grep -qx "servers:2" && return 0
    sleep 0.1
  done
  echo "$0: the servers did not register with ninf-meta" >&2
  exit 1
}

sites_up meta --site s1:"$slow":0 --site s2:"$fast":0
for round in $(seq "$rounds"); do
  for policy in $policies; do
    echo "$0: round $round, $policy" >&2
    start "$policy"
    for c in $clients; do
      in_site hub env NINF_TRANSPORT=tcp "$build/loadtest/ninf-loadtest" \
        --metaserver "127.0.0.1:$meta_port" --sample 10.79.1.2:3000 --sample 10.79.2.2:3000 \
        --workload linpack --size "$size" --clients "$c" --interval 0 --duration "$duration" -q \
        --label "$policy" --summary "$work/summary-$round.csv" --table "$work/table.md" \
        --csv "$work/$policy-$c-$round.csv" >/dev/null ||
        echo "$0: a call failed: $policy c=$c round $round" >&2
    done
    stop_all
  done
done

{
  echo "# Placement policies under load (ninf-meta, unequal links)"
  echo
  echo "\`bash bench/loadtest_meta.sh $(basename "$build") --size $size --clients \"$clients\" --policies \"$policies\" --slow-rate $slow --fast-rate $fast --duration $duration --rounds $rounds\`"
  echo "on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
  echo "$(date -u +%Y-%m-%d), $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'). Two emulated sites (\`ninf-sites\`): s1 behind $slow,"
  echo "s2 behind $fast; a ninfd in each (1 slot, 1 thread per call, pinned to its own core);"
  echo "ninf-meta and the clients in the hub, every call placed by ninf-meta. Closed-loop"
  echo "clients, dgesv n = $size ($((size * size * 8 / 1000000)) MB each way), every answer checked, $duration s per point."
  echo
  /usr/bin/python3 "$here/report.py" meta "$work" "$rounds" "$clients"
  echo
  echo "Every run, in the Ninf study's table form:"
  echo
  cat "$work/table.md"
} >"$out"
echo "$0: wrote $out" >&2
