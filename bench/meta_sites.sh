#!/usr/bin/env bash
# bench/meta_sites.sh - bandwidth matters for placement (issue 9; seed paper
# 004: placing by server load alone fails for communication-heavy Linpack
# over wide-area links). Three sites on one machine, network namespaces
# joined by shaped veth pairs; each policy of ninf-meta places the same
# calls; written up as bench/results/meta_sites-DATE.md (raw log next to it).
#
#   bash bench/meta_sites.sh BUILD_DIR [--out FILE] [--quick] [--calls K]
#       [--large-calls K] [--sizes N ...] [--ep-m M]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file, and the default is a
# new bench/results/meta_sites-DATE.md.)
#
# Must run as root (ninf-sites). BUILD_DIR is a built tree with
# bench/bench_placed (BENCH_PLACED=PROGRAM runs another program with the
# same arguments and output instead).
#
# Sites (ninf-sites; every address lives only inside the namespaces it
# makes for this run, ninfsite-msitePID-*):
#
#                    hub            (site "client")
#        ninf-meta --listen 0.0.0.0 --policy P      bench_placed: the measured
#        background client: EP, m = 26, in a loop   calls, NINF_METASERVER set,
#        straight to ninf://10.79.2.2:3000/ep       bare names, one at a time
#          10.79.1.1 l1                    l2 10.79.2.1
#                |  tbf 100 Mbit/s               |  tbf 1 Gbit/s
#                |  (both ends, burst 64kb)      |  (both ends, burst 256kb)
#          10.79.1.2 eth0                  eth0 10.79.2.2
#             site s1                         site s2
#             ninfd :3000, CPU 0              ninfd :3000, CPU 1
#             IDLE, slow link                 BUSY, fast link
#
# What is measured: the client's wall time of each Ninf_call (placement,
# the completion policy's link probes on its first call, arguments, queue,
# compute, results) for dgesv at n = 2000 and 4000 (32 and 128 MB each
# way) and NAS EP (m = 26, 0.7-1 s here, a few bytes: the compute-only
# control), under the policies completion, load and round-robin; mean,
# median and p95 per (workload, policy), and which server got the calls
# (ninfd --status counts). 8 calls per policy, 4 at n = 4000 (~23 s each
# on the slow link); about 6 minutes in all. The seed's case: dgesv
# n = 2000 moves 64 MB, 5.1 s at 100 Mbit/s against 0.5 s at 1 Gbit/s, far
# more than waiting for the busy server's current call (< 1 s); `load`
# sends it to the idle server anyway, `completion` should not. For EP both
# should pick the idle server and take the same time; round-robin sends
# every other call to the busy one whatever the call, so it waits there.
#
# What keeps the comparison fair:
#  - Every policy gets the same calls in the same order (same matrices,
#    sizes and counts) and a fresh ninf-meta and fresh ninfds, so none
#    inherits link forecasts, learned speeds, warm executables or queued
#    work from the one before; only the namespaces and links are shared.
#  - Both servers compute alike: --slots 1 --thread-budget fixed --threads-per-job 1, each pinned
#    (taskset) to its own core. "Busy" is then only "its one slot is taken
#    by somebody else's call": a queue wait, never a slower CPU. Unpinned on
#    2 cores, the background EP would also slow the idle server's calls and
#    the calls would fight the client and the kernel's veth traffic for
#    cores, blurring what the policies choose between.
#  - The busy load is the same under every policy: one background client
#    calls EP back to back on s2 (by its ninf:// name, never placed), started
#    before the first measured call and kept up until the policy's last. At
#    a placement s2 reports one running call (load 1.0; bar the moment
#    between two background calls) and s1 none; a call sent to s2 waits for
#    the rest of the running EP (< 1 s): the background never has more than
#    one call there.
#  - Calls go one at a time, so a policy's calls never queue behind each
#    other: what differs is only where each one runs.
#  - TCP everywhere (NINF_TRANSPORT=tcp, ninfd --unix-socket ""): all sites
#    share one host, and the same-host shortcut would bypass the links (and
#    both ninfds, on port 3000 each, would want /tmp/ninfd-3000.sock).
#  - The links differ in bandwidth only (tbf; netem does not exist in this
#    kernel): the round trip is a veth's, tens of microseconds, on both.
#  - The policies run in a fixed order (completion, load, round-robin), so
#    a change in the machine's other load during the run lands on one of
#    them; two runs side by side show how much that moves.
# The two cores are shared with the client, ninf-meta, the background
# client and the kernel's forwarding; run the script under `nice -n 19` on a
# shared machine and expect noise of ~10% in single calls. Pinning does not
# make the two vCPUs of a VM independent: on the 2-vCPU EPYC guest this was
# written on, EP computed in ~0.7 s with the other vCPU idle and in
# ~1.0-1.1 s with it busy (ninfd's call_done log). So s1's calls, which run
# beside the background EP, compute up to ~40% slower than s2's, which run
# while the background call waits for the slot: a few percent of the
# slow-link dgesv times, but enough to offset the wait of round-robin's EP
# calls on s2.
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_declare meta_sites "Placement across sites: dgesv and EP placed by each ninf-meta policy over unequal links."
bench_option --calls K calls 8 1 "calls per policy, dgesv below n = 4000 and EP"
bench_option --large-calls K large_calls 4 1 "calls per policy, dgesv at n >= 4000"
bench_option --sizes "N ..." sizes "2000 4000" 500 "dgesv sizes n"
bench_option --ep-m M ep_m 26 20 "EP with 2^M pairs, also the background load's call"
bench_parse "$@"
bench_need_root "ninf-sites"
[[ $(nproc) -ge 2 ]] || { echo "$0: needs 2 CPUs (one per server)" >&2; exit 1; }
bench_need server/ninfd metaserver/ninf-meta
client=${BENCH_PLACED:-$build/bench/bench_placed}
[[ -x "$client" ]] || { echo "$0: $client is not built" >&2; exit 1; }
policies=(completion load round-robin)

# The sites. Index 1: the idle server behind the slow link; 2: the busy
# server behind the fast one. Addresses exist only inside our namespaces.
addr=([1]=10.79.1.2 [2]=10.79.2.2)  # the server's end (ninf-sites: site i is 10.79.i.2)
gw=([1]=10.79.1.1 [2]=10.79.2.1)    # the hub's end
rate=([1]=100mbit [2]=1gbit)        # tc's spelling
speed=([1]="100 Mbit/s" [2]="1 Gbit/s")
burst=([1]=64kb [2]=256kb)          # >= one GSO packet (64 KiB) + slack
cpu=([1]=0 [2]=1)
server_port=3000                    # fixed: one ninfd per namespace

meta_pid="" meta_port="" background_pid=""
server_pid=([1]="" [2]="")

# in_client CMD...: CMD in the hub, where the client, ninf-meta and the
# background client run.
in_client() { in_site hub "$@"; }

# wait_until WHAT PID CMD...: polls CMD for 10 s; fails if PID dies first.
wait_until() {
  local what=$1 pid=$2
  shift 2
  for _ in $(seq 100); do
    "$@" >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || { echo "$0: $what died; logs in $work:" >&2; tail -n 5 "$work"/*.log >&2; exit 1; }
    sleep 0.1
  done
  echo "$0: timed out waiting for $what" >&2
  exit 1
}

setup_sites() {
  sites_up msite --site s1:"${rate[1]}":0:"${burst[1]}" --site s2:"${rate[2]}":0:"${burst[2]}"
  echo "meta_sites.sh: sites up: $(site_netns s1) ${speed[1]}, $(site_netns s2) ${speed[2]}" >&2
}

meta() { in_client "$build/metaserver/ninf-meta" "$@" --server "127.0.0.1:$meta_port"; }
meta_has_servers() { meta --status | grep -qx "servers:$1"; }
ninfd_status() { in_client "$build/server/ninfd" --status --server "${addr[$1]}:$server_port"; }
completed_on() { ninfd_status "$1" | sed -n 's/^completed://p'; }
# The same once it holds still: ninfd may count a call just after its client
# has the results.
settled_completed_on() {
  local now last
  now=$(completed_on "$1")
  while sleep 0.2 && last=$now && now=$(completed_on "$1") && [[ "$now" != "$last" ]]; do :; done
  echo "$now"
}
background_calls() { [[ $(wc -l <"$work/background.txt") -ge $1 ]]; }

start_meta() {
  start_bg ninf-meta "$work/meta.ready" "$work/meta.log" in_site hub "$build/metaserver/ninf-meta" \
    --port 0 --ready-file "$work/meta.ready" --listen 0.0.0.0 --insecure --policy "$1" \
    --report-ms 500 --lease-ms 3000 --log-level warn
  meta_pid=$bg_pid
  meta_port=$(head -n1 "$work/meta.ready")
}

# ninfd of site i: one slot, one thread per job, pinned to its own core,
# registered with ninf-meta through the hub's end of its link.
start_server() {
  local i=$1
  start_bg "ninfd s$i" "$work/s$i.ready" "$work/s$i.log" in_site "s$i" taskset -c "${cpu[i]}" \
    "$build/server/ninfd" --port "$server_port" --ready-file "$work/s$i.ready" \
    --registry "$build/stubs/registry" --unix-socket "" --slots 1 --thread-budget fixed \
    --threads-per-job 1 --listen "${addr[i]}" --insecure --metaserver "${gw[i]}:$meta_port" \
    --site "s$i" --advertise "${addr[i]}:$server_port" --log-level warn
  server_pid[i]=$bg_pid
}

# The busy server's load: EP calls back to back, straight to s2. Waits for
# 3 of them, so that s2 has learned EP's speed and reported its slot taken.
start_background() {
  : >"$work/background.txt"
  start_bg "background client" "" "$work/background.log" in_site hub env NINF_TRANSPORT=tcp \
    "$client" --calls 0 --name "ninf://${addr[2]}:$server_port/ep" ep "$ep_m" \
    >"$work/background.txt"
  background_pid=$bg_pid
  wait_until "background client" "$background_pid" background_calls 3
}

# The background client first, so that the busy ninfd has no call to wait for.
stop_policy() {
  bench_stop "$background_pid"
  bench_stop "${server_pid[1]}"
  bench_stop "${server_pid[2]}"
  bench_stop "$meta_pid"
  background_pid="" meta_pid="" server_pid=([1]="" [2]="")
}

# run_calls POLICY FN SIZE K: K placed calls, one line each into the raw
# log, then where they ran (s1's completed count; s2 got the rest).
run_calls() {
  local policy=$1 fn=$2 size=$3 k=$4 before after
  before=$(completed_on 1)
  echo "meta_sites.sh: $policy: $k x $fn $size" >&2
  in_client env "NINF_METASERVER=127.0.0.1:$meta_port" NINF_SITE=client NINF_TRANSPORT=tcp \
    "$client" --calls "$k" "$fn" "$size" | sed "s/^/policy=$policy /" | tee -a "$raw_log" >&2
  after=$(settled_completed_on 1)
  echo "placed policy=$policy fn=$fn size=$size calls=$k on_s1=$((after - before))" \
    "on_s2=$((k - after + before))" | tee -a "$raw_log" >&2
}

run_policy() {
  local policy=$1 n
  start_meta "$policy"
  start_server 1
  start_server 2
  wait_until "servers:2 at ninf-meta" "$meta_pid" meta_has_servers 2
  start_background
  meta --servers | sed "s/^/servers policy=$policy /" >>"$raw_log"
  run_calls "$policy" ep "$ep_m" "$calls"
  for n in $sizes; do
    run_calls "$policy" dgesv "$n" "$([[ $n -ge 4000 ]] && echo "$large_calls" || echo "$calls")"
  done
  meta --links | sed "s/^/links policy=$policy /" >>"$raw_log"
  stop_policy
  sed "s/^/background policy=$policy /" "$work/background.txt" >>"$raw_log"
}

# stats POLICY FN SIZE: "mean median p95 count" of the calls' seconds
# (median and p95 by nearest rank; with 8 calls, p95 is the largest).
stats() {
  grep "^policy=$1 call .* fn=$2 size=$3 " "$raw_log" | sed 's/.*seconds=//' | sort -g |
    awk '{ v[NR] = $1; s += $1 } END {
      if (NR == 0) { print "nan nan nan 0"; exit }
      r = int(0.95 * NR); if (r < 0.95 * NR) r++
      printf "%.3f %.3f %.3f %d\n", s / NR, v[int((NR + 1) / 2)], v[r], NR }'
}

# placed POLICY FN SIZE: "s1 s2" call counts.
placed() {
  grep "^placed policy=$1 fn=$2 size=$3 " "$raw_log" | sed 's/.*on_s1=\([0-9-]*\) on_s2=\([0-9-]*\)/\1 \2/'
}

write_report() {
  local cpu_model fn size policy mean median p95 count s1 s2 base ratio workloads=("ep $ep_m") n
  for n in $sizes; do workloads+=("dgesv $n"); done
  cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
  echo "# Placement across sites (ninf-meta, issue 9), $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "\`bench/meta_sites.sh\` on $cpu_model ($(nproc) vCPUs), $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'):"
  echo "three network namespaces on one host. s1: an idle ninfd behind ${speed[1]}; s2: a ninfd"
  echo "behind ${speed[2]} whose one slot a background client keeps busy with EP m = $ep_m, back"
  echo "to back. Both servers: 1 slot, 1 thread per job, each pinned to its own core. Per policy a"
  echo "fresh ninf-meta and fresh servers; calls one at a time from the client site, TCP."
  echo "Times are the client's wall time per Ninf_call, seconds."
  if [[ -n "${BENCH_PLACED:-}" ]]; then
    echo "Calls made by \`$(basename "$client")\` (BENCH_PLACED), a stand-in for bench_placed."
  fi
  echo
  echo "| workload | policy | calls | on s1 (idle, ${speed[1]}) · s2 (busy, ${speed[2]}) | mean s | median s | p95 s | mean / completion's |"
  echo "|---|---|---:|---|---:|---:|---:|---:|"
  for w in "${workloads[@]}"; do
    read -r fn size <<<"$w"
    base=""
    for policy in "${policies[@]}"; do
      read -r mean median p95 count < <(stats "$policy" "$fn" "$size") || true
      read -r s1 s2 < <(placed "$policy" "$fn" "$size") || true
      [[ -z "$base" ]] && base=$mean
      ratio=$(awk -v a="$mean" -v b="$base" 'BEGIN { printf "%.2f", a / b }')
      echo "| $fn $([[ $fn == ep ]] && echo "m = $size" || echo "n = $size") | $policy | $count | $s1 · $s2 | $mean | $median | $p95 | $ratio |"
    done
  done
  echo
  echo "Targets (issue 9):"
  echo
  echo "| target | measured | |"
  echo "|---|---|---|"
  for n in $sizes; do
    read -r mean _ _ _ < <(stats load dgesv "$n") || true
    read -r base _ _ _ < <(stats completion dgesv "$n") || true
    awk -v a="$mean" -v b="$base" -v n="$n" 'BEGIN {
      r = a / b; printf "| dgesv n = %d: completion >= 3 x faster than load (mean) | load %.2f s / completion %.2f s = %.2f x | %s |\n",
        n, a, b, r, (r >= 3 ? "met" : "not met") }'
  done
  read -r base _ _ _ < <(stats completion ep "$ep_m") || true
  for policy in load round-robin; do
    read -r mean _ _ _ < <(stats "$policy" ep "$ep_m") || true
    awk -v a="$mean" -v b="$base" -v p="$policy" 'BEGIN {
      d = (a / b - 1) * 100; printf "| EP within 5%% across policies: %s vs completion | %.3f s vs %.3f s, %+.1f%% | %s |\n",
        p, a, b, d, (d <= 5 && d >= -5 ? "met" : "not met") }'
  done
  echo
  echo "The links as ninf-meta saw them at the end of the completion run (probes and transfers):"
  echo
  echo "| site | server | latency ms | ± error | forecaster | bandwidth MB/s | ± error | forecaster | samples |"
  echo "|---|---|---:|---:|---|---:|---:|---|---:|"
  # ninf-meta --links columns: site server latency_ms latency_err_ms
  # latency_method bandwidth_MBps bandwidth_err_MBps bandwidth_method samples age
  grep '^links policy=completion client ' "$raw_log" |
    awk '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $3, $4, $5, $6, $7, $8, $9, $10, $11 }'
  echo
  echo "The busy server's background EP calls (m = $ep_m), per policy run:"
  echo
  echo "| policy | calls | mean s |"
  echo "|---|---:|---:|"
  for policy in "${policies[@]}"; do
    grep "^background policy=$policy " "$raw_log" | sed 's/.*seconds=//' |
      awk -v p="$policy" '{ s += $1 } END { printf "| %s | %d | %.3f |\n", p, NR, (NR ? s / NR : 0) }'
  done
}

start=$(date +%s)
: >"$raw_log"
setup_sites
for policy in "${policies[@]}"; do
  echo "meta_sites.sh: policy $policy" >&2
  run_policy "$policy"
done
write_report >"$out"
echo "meta_sites.sh: wrote $out in $(($(date +%s) - start)) s" >&2
