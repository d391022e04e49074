#!/usr/bin/env bash
# bench/scale.sh - one ninf-meta in front of many servers and many clients
# on one machine (issue 30, item 5): >= 32 real ninfd in >= 8 emulated sites
# (ninf-sites: network namespaces, links of different rates) and >= 256
# clients (ninf-loadtest --metaserver, the Ninf study's s/p model with a
# long interval: mostly asleep). Written up as bench/results/scale-DATE.md
# by bench/scale_report.py (raw log next to it).
#
#   bash bench/scale.sh BUILD_DIR [--out FILE] [--quick] [--sites N]
#       [--servers-per-site K] [--clients C] [--interval S] [--probability P]
#       [--size N] [--idle S] [--duration S] [--policy P] [--probe-wait S]
#       [--delays LIST]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file.) Root (ninf-sites).
#
# Topology (every address exists only inside the namespaces made here):
#
#                         hub: ninf-meta --listen 0.0.0.0
#     l1 1gbit   l2 500mbit   l3 200mbit   l4 100mbit  ...  l8 20mbit (tbf)
#        |           |            |            |               |
#     site s1     site s2      site s3      site s4    ...  site s8
#     10.79.1.2   10.79.2.2    ...
#     ninfd :3001..:3000+K (1 slot, 1 thread per call, 1 warm executable)
#     C/N clients of ninf-loadtest --netns (one ninf-loadtest per site)
#
# A client's calls to a server of its own site stay inside its namespace;
# to any other site they cross the client's link and the server's (through
# the hub). With --delays (one-way ms per site), every crossing also takes
# the two sites' delays, each way (this kernel has no netem: ninf-linkdelay
# relays add them). Each ninfd then listens on a port of its own
# (3000 + 100 i + k) on every address of its site and advertises
# 127.0.0.1:PORT, which in its own site is itself and in every other site
# (and the hub) is a relay to it through the links: ninf-meta hands every
# client the same address, and each client's own namespace decides the path. So the completion policy, which predicts transfer from measured
# links, should keep a site's calls on its own site's servers while they
# have free slots; a link-blind policy (load, round-robin, random) sends
# 7 of 8 elsewhere. The report checks:
#  - placement: every call ran on a registered, live server (the CSV's
#    server column against the registrations; none expired or closed
#    during the run), and, under completion, the share of each site's calls
#    run on its own site's servers;
#  - ninf-meta's cost, from /proc/PID/stat and /proc/PID/status: CPU
#    seconds and RSS with no server, after the registrations, over an idle
#    period with every server reporting (the cost of reports alone), and
#    over the load (per placement, less the reports' share);
#  - nothing lost: calls issued (CSV rows) = completed + failed (0) = the
#    ninfds' completed counts (--status) = ninf-meta's placements and
#    outcomes; no process left in the namespaces once everything is stopped.
#
# Each site's clients come from one ninf-loadtest (32 by default), and the
# eight are started an eighth of the interval apart, so the sites' ticks
# do not coincide; with a ninf-loadtest that has --phase, every client's
# first tick is also at a random offset (--phase random).
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_declare scale "one ninf-meta, many ninfd in emulated sites, many mostly sleeping clients."
bench_option --sites N nsites 8 "" "emulated sites (at most 8 rates below; more repeat them)"
bench_option --servers-per-site K per_site 4 "" "ninfd in each site"
bench_option --clients C clients 256 "" "client processes in all, spread evenly over the sites"
bench_option --interval S interval 8 4 "seconds between a client's ticks"
bench_option --probability P probability 0.5 "" "chance of a call at each tick"
bench_option --workload W workload linpack "" "ninf-loadtest's workload: linpack (dgesv) or ep (NAS EP: no arrays, seconds of computing)"
bench_option --size N size 100 "" "linpack: dgesv n of each call (16 n^2 bytes moved); ep: 2^N pairs"
bench_option --idle S idle 30 10 "seconds with every server reporting and no client"
bench_option --duration S duration 90 24 "seconds of the clients' ticks"
bench_option --policy P policy completion "" "ninf-meta's placement policy"
bench_option --probe-wait S probe_wait "" "" "ninf-meta's probe_wait_seconds (\"\": its default; 0: each client probes every stale link, as before)"
bench_option --delays LIST delays "" "" "one-way delay of each site's link in ms, comma-separated, repeated over the sites (\"\": none)"
bench_parse "$@"
bench_need_root "ninf-sites"
bench_need server/ninfd metaserver/ninf-meta loadtest/ninf-loadtest stubs/registry/dgesv stubs/registry/ep
[[ $workload == linpack || $workload == ep ]] || { echo "$0: --workload is linpack or ep" >&2; exit 2; }
((nsites >= 1 && per_site >= 1 && clients >= nsites)) || { echo "$0: need sites >= 1, servers >= 1, clients >= sites" >&2; exit 2; }
(((clients % nsites) == 0)) || { echo "$0: --clients must be a multiple of --sites" >&2; exit 2; }

rates=(1gbit 500mbit 200mbit 100mbit 100mbit 50mbit 50mbit 20mbit)
hz=$(getconf CLK_TCK)
meta_pid="" meta_port=""
meta_extra=()
[[ -z $probe_wait ]] || meta_extra=(--probe-wait-seconds "$probe_wait")
server_pids=()
lt_pids=()

site_rate() { echo "${rates[$((($1 - 1) % ${#rates[@]}))]}"; }
IFS=, read -r -a delay_list <<<"${delays:-0}"
site_delay() { echo "${delay_list[$((($1 - 1) % ${#delay_list[@]}))]}"; }
# With delays a server's port is its own everywhere (see the header).
server_port() { if [[ -n $delays ]]; then echo $((3000 + 100 * $1 + $2)); else echo $((3000 + $2)); fi; }
server_addr() { if [[ -n $delays ]]; then echo "127.0.0.1:$(server_port "$1" "$2")"; else echo "10.79.$1.2:$(server_port "$1" "$2")"; fi; }
meta() { in_site hub "$build/metaserver/ninf-meta" "$@" --server "127.0.0.1:$meta_port"; }
meta_field() { meta --status | sed -n "s/^$1://p"; }

# proc_line WHAT PID: CPU seconds and RSS of PID. CPU: the time on CPU of
# its threads alive now, in ns (/proc/PID/task/*/schedstat), where the
# kernel has schedstats; else user + system in clock ticks (/proc/PID/stat,
# 10 ms steps, coarse for ninf-meta's fractions of a second).
proc_line() {
  local what=$1 pid=$2 cpu rss hwm
  if cpu=$(cat "/proc/$pid/task/"*/schedstat 2>/dev/null | awk '{ ns += $1 } END { if (NR) printf "%.6f", ns / 1e9; else exit 1 }'); then
    :
  else
    cpu=$(awk -v h="$hz" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / h }' "/proc/$pid/stat")
  fi
  rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
  hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
  echo "$what t=$(date +%s.%N | cut -c1-14) cpu_s=$cpu rss_kb=$rss hwm_kb=$hwm"
}

# meta_snapshot PHASE: ninf-meta's CPU, memory and counters now, into the raw log.
meta_snapshot() {
  {
    proc_line "meta phase=$1" "$meta_pid"
    echo "meta_status phase=$1 $(meta --status | tr ':' '=' | grep -v '^version=' | tr '\n' ' ')"
  } >>"$raw_log"
}

# All ninfds' CPU and memory together (they are many; the report shows sums).
servers_snapshot() {
  local pid cpu=0 rss=0 line c r
  for pid in "${server_pids[@]}"; do
    line=$(proc_line x "$pid")
    c=${line#*cpu_s=} r=${line#*rss_kb=}
    cpu=$(awk -v a="$cpu" -v b="${c%% *}" 'BEGIN { printf "%.6f", a + b }')
    rss=$((rss + ${r%% *}))
  done
  echo "ninfds phase=$1 count=${#server_pids[@]} cpu_s=$cpu rss_kb=$rss" >>"$raw_log"
}

wait_for_servers() {
  local n=$1
  for _ in $(seq 300); do
    [[ $(meta_field servers 2>/dev/null) == "$n" ]] && return 0
    kill -0 "$meta_pid" 2>/dev/null || { echo "$0: ninf-meta died; logs in $work" >&2; exit 1; }
    sleep 0.1
  done
  echo "$0: only $(meta_field servers) of $n servers registered with ninf-meta" >&2
  exit 1
}

specs=()
for i in $(seq "$nsites"); do specs+=(--site "s$i:$(site_rate "$i"):$(site_delay "$i")"); done
sites_up scale "${specs[@]}"
: >"$raw_log"
echo "setup sites=$nsites per_site=$per_site clients=$clients interval=$interval probability=$probability workload=$workload size=$size idle=$idle duration=$duration policy=$policy probe_wait=${probe_wait:-default} delays=${delays:-none} quick=$quick cpus=$(nproc) load1=$(cut -d' ' -f1 /proc/loadavg)" >>"$raw_log"
for i in $(seq "$nsites"); do echo "site id=s$i addr=10.79.$i.2 rate=$(site_rate "$i") delay_ms=$(site_delay "$i")" >>"$raw_log"; done
if [[ -n $delays ]]; then
  echo "$0: relays to every server from every other site and the hub" >&2
  for where in hub $(seq -f 's%g' "$nsites"); do
    for i in $(seq "$nsites"); do
      [[ $where != "s$i" ]] || continue
      for k in $(seq "$per_site"); do
        port=$(server_port "$i" "$k")
        "$ninf_sites" relay "$sites_set" "$where" "$port" "s$i" "$port" >/dev/null
      done
    done
  done
fi

start_bg ninf-meta "$work/meta.ready" "$work/meta.log" in_site hub "$build/metaserver/ninf-meta" \
  --port 0 --listen 0.0.0.0 --insecure --policy "$policy" --probe-large-bytes 256K \
  --ready-file "$work/meta.ready" --log-level "${BENCH_LOG_LEVEL:-warn}" "${meta_extra[@]}"
meta_pid=$bg_pid
meta_port=$(head -n1 "$work/meta.ready")
sleep 0.5
meta_snapshot empty

echo "$0: starting $((nsites * per_site)) ninfd" >&2
for i in $(seq "$nsites"); do
  for k in $(seq "$per_site"); do
    port=$(server_port "$i" "$k")
    listen=10.79.$i.2
    [[ -z $delays ]] || listen=0.0.0.0  # 127.0.0.1:PORT in its own site too
    start_bg "ninfd s$i:$port" "$work/s$i-$k.ready" "$work/ninfd-s$i.log" in_site "s$i" \
      "$build/server/ninfd" --port "$port" --listen "$listen" --advertise "$(server_addr "$i" "$k")" \
      --insecure --unix-socket "" --registry "$build/stubs/registry" --slots 1 \
      --thread-budget fixed --threads-per-job 1 --warm-executables 1 \
      --metaserver "10.79.$i.1:$meta_port" --site "s$i" --ready-file "$work/s$i-$k.ready" \
      --log-level warn
    server_pids+=("$bg_pid")
    echo "server addr=$(server_addr "$i" "$k") site=s$i pid=$bg_pid" >>"$raw_log"
  done
done
wait_for_servers $((nsites * per_site))
meta_snapshot registered
servers_snapshot registered

echo "$0: idle for $idle s with every server reporting" >&2
sleep "$idle"
meta_snapshot idle
servers_snapshot idle

phase=()
"$build/loadtest/ninf-loadtest" --help 2>&1 | grep -q -- '--phase' && phase=(--phase random)
per=$((clients / nsites))
echo "$0: $clients clients ($per per site) for $duration s" >&2
for i in $(seq "$nsites"); do
  # The sites' loadtests an eighth of the interval apart (see the header).
  in_site hub "$build/loadtest/ninf-loadtest" --metaserver "10.79.$i.1:$meta_port" \
    --netns "$(site_netns "s$i")" --workload "$workload" --size "$size" --clients "$per" \
    --interval "$interval" --probability "$probability" --duration "$duration" "${phase[@]}" \
    -q --label "s$i" --csv "$work/calls-s$i.csv" >"$work/loadtest-s$i.txt" 2>"$work/loadtest-s$i.log" &
  lt_pids+=($!)
  bench_track "$!"
  sleep "$(awk -v s="$interval" -v n="$nsites" 'BEGIN { printf "%.3f", s / n }')"
done
status=0
for i in $(seq "$nsites"); do
  rc=0
  wait "${lt_pids[i - 1]}" || rc=$?
  echo "loadtest site=s$i exit=$rc" >>"$raw_log"
  ((rc == 0)) || status=1
done
lt_pids=()
# ninfd counts a call just after its client has the results: let them settle.
sleep 1
meta_snapshot loaded
servers_snapshot loaded

for i in $(seq "$nsites"); do
  for k in $(seq "$per_site"); do
    st=$(in_site hub "$build/server/ninfd" --status --server "10.79.$i.2:$(server_port "$i" "$k")" |
      grep -E '^(completed|failed|cancelled|function\.(dgesv|ep)\.(mean_seconds|compute_seconds)):' |
      sed -E 's/^function\.(dgesv|ep)\./\1_/' | tr ':' '=' | tr '\n' ' ')
    echo "served addr=$(server_addr "$i" "$k") $st" >>"$raw_log"
  done
  # The columns by the header's names (docs/loadtest.md), wherever they are.
  awk -F, -v s="s$i" 'NR == 1 { for (k = 1; k <= NF; k++) col[$k] = k; next }
    { printf "call site=%s client=%s server=%s outcome=%s start_s=%s response_s=%s wait_s=%s\n", s,
        $col["client"], $col["server"], $col["outcome"], $col["start_s"], $col["response_s"], $col["wait_s"] }' \
    "$work/calls-s$i.csv" >>"$raw_log"
done
meta --servers | sed 's/^/meta_servers /' >>"$raw_log"

# Everything stopped as an operator would (TERM), then what is left in
# our namespaces is counted: executables, ninfds or clients that outlived
# their parents (not the links' relays: ninf-sites' own, stopped with them).
for pid in "${server_pids[@]}"; do bench_stop "$pid"; done
bench_stop "$meta_pid"
sleep 1
left=0
for where in hub $(seq -f 's%g' "$nsites"); do
  ip netns pids "$(site_netns "$where")" | xargs -r ps -o pid=,comm= -p | grep -v ' ninf-linkdelay$' >"$work/left-$where.txt" || true
  n=$(wc -l <"$work/left-$where.txt")
  left=$((left + n))
  cat "$work/left-$where.txt" >>"$work/left.txt"
done
echo "leftover processes=$left" >>"$raw_log"
[[ ! -s $work/left.txt ]] || sed 's/^/leftover /' "$work/left.txt" >>"$raw_log"

{
  echo "# One ninf-meta, $((nsites * per_site)) ninfd in $nsites sites, $clients clients ($(date -u '+%Y-%m-%d %H:%M UTC'))"
  echo
  echo "\`bash bench/scale.sh $(basename "$build")$([[ $quick == 1 ]] && echo ' --quick') --policy $policy${probe_wait:+ --probe-wait $probe_wait} --workload $workload --size $size --clients $clients --interval $interval --probability $probability${delays:+ --delays $delays}\` on $(nproc) vCPUs"
  echo "($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)), commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?');"
  echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end. Raw log: \`$(basename "$raw_log")\`."
  echo
  /usr/bin/python3 "$here/scale_report.py" "$raw_log"
} >"$out"
echo "$0: wrote $out" >&2
exit "$status"
