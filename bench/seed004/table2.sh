#!/usr/bin/env bash
# bench/seed004/table2.sh - seed 004's Table 2: Ninf_call's communication
# throughput against FTP's (a raw bulk TCP transfer of the same bytes over
# the same link), per client/server set-up.
#
#   bash bench/seed004/table2.sh BUILD_DIR [--out FILE] [--quick] [--sizes LIST]
#       [--quota PCT] [--client-cpu CPU] [--server-cpus CPUS] [--rate RATE]
#       [--flops-per-byte F] [--min-seconds S] [--ftp-reps R]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file (default a new
# bench/results/seed004/table2-DATE.md); the runs of record go to
# bench/results/seed004/table2.md.) Root (cgroups, ninf-sites).
#
# The paper's pairs were machine types; here four set-ups, each a client in
# a site of ninf-sites calling one ninfd in the hub (pinned to
# --server-cpus, 1 slot, all its cores for the call, as in fig3_4.sh):
#
#   weak-LAN     weak client (--quota % of --client-cpu) over the LAN link
#                (--rate; auto = fig3_4.sh's: the server's Mflops / 240 flops
#                per byte): Fig. 4's set-up, the Alpha -> J90 pair
#   strong-LAN   the same client CPU with no quota, the same link: a faster
#                workstation on the same LAN (UltraSPARC -> Alpha)
#   weak-100M    the weak client over 100 Mbit/s: the paper's Fast Ethernet
#                taken literally (SuperSPARC -> UltraSPARC / Alpha)
#   strong-wire  no quota, no shaping (the veth's own speed): the data path
#                with nothing else in the way, where Ninf's own cost per
#                byte (the paper's data conversion) would show
#
# Per set-up and n: Ninf_call linpack repeated for --min-seconds (its bytes,
# 8n^2 + 16n, over its transfer time: the executable receiving the
# arguments + the results coming back; and over the whole call less the
# server's compute, which also holds the call's set-up), then the FTP
# baseline: --ftp-reps transfers of the same bytes in and back over one TCP
# connection to a sink in the hub, from the same group and site. The report
# (bench/seed004/single_report.py) gives MB/s per set-up, averaged over n as
# the paper averaged its calls, with the paper's pairs beside them and the
# verdict against "Ninf_call reaches 79-100 % of FTP".
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=bench/cgroup.sh
source "$(dirname "$0")/../cgroup.sh"
bench_declare seed004/table2 "Seed 004 Table 2: Ninf_call against FTP (raw TCP) throughput per set-up."
bench_option --sizes LIST sizes "600 1000 1400" "600 1000" "Linpack n (the paper's multi-client sizes)"
bench_option --quota PCT quota 25 "" "the weak client's CPU quota, percent of one CPU"
bench_option --client-cpu CPU client_cpu 0 "" "the clients' CPU"
bench_option --server-cpus CPUS server_cpus 1 "" "ninfd's CPUs (taskset list)"
bench_option --rate RATE rate auto "" "the LAN link (tc's spelling), or auto: server Mflops / flops-per-byte"
bench_option --flops-per-byte F fpb 240 "" "server flops per byte of link for --rate auto"
bench_option --min-seconds S min_seconds 2 0.5 "seconds of Ninf_calls per point"
bench_option --ftp-reps R ftp_reps 5 3 "FTP transfers per point (median)"
bench_parse "$@"
bench_need_root "cgroups and ninf-sites"
bench_need server/ninfd bench/linpack_client sites/ninf-sites stubs/registry/linpack
client="$build/bench/linpack_client"
report="$(dirname "$0")/single_report.py"
raw="$work/raw.txt"

server_threads=$(taskset -c "$server_cpus" nproc)
server_mflops=$(OPENBLAS_NUM_THREADS=$server_threads taskset -c "$server_cpus" "$client" sweep \
  --methods blocked --min-seconds 1 1600 | sed -n 's/.* mflops=\([0-9.]*\).*/\1/p')
[[ $rate != auto ]] ||
  rate=$(awk -v m="$server_mflops" -v f="$fpb" 'BEGIN { printf "%dmbit", m / f * 8 + 0.5 }')
{
  echo "# command=bash bench/seed004/table2.sh $*"
  echo "# date=$(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# machine=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1) ($(nproc) vCPUs)"
  echo "# commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "# quick=$quick"
  echo "# quota=$quota"
  echo "# client_cpu=$client_cpu"
  echo "# server_cpus=$server_cpus"
  echo "# server_mflops=$server_mflops"
  echo "# rate=$rate"
} >"$raw"
# The raw log beside the report even when a step fails (then without a report).
keep_raw() { [[ -e $raw_log ]] || cp "$raw" "$raw_log"; }
bench_on_exit keep_raw

# One site per link: a (the LAN), b (100 Mbit/s), d (unshaped).
sites_up s4t --site a:"$rate":0 --site b:100mbit:0 --site d:none:0
start_bg ninfd "$work/ready" "$work/ninfd.log" in_site hub taskset -c "$server_cpus" \
  "$build/server/ninfd" --port 0 --listen 0.0.0.0 --insecure --unix-socket "" \
  --registry "$build/stubs/registry" --ready-file "$work/ready" --log-level warn \
  --slots 1 --thread-budget fixed --threads-per-job "$server_threads"
hub=$(site_addr hub)
server="$hub:$(head -n1 "$work/ready")"
start_bg sink "$work/sink.ready" "$work/sink.log" in_site hub "$client" sink --listen 0.0.0.0 \
  --ready-file "$work/sink.ready"
sink="$hub:$(head -n1 "$work/sink.ready")"
cg_make weak "$client_cpu" "$quota"
cg_make strong "$client_cpu"

# point SETUP GROUP SITE N: Ninf_calls then FTP, lines tagged with the set-up.
point() {
  local setup=$1 group=$2 site=$3 n=$4
  {
    cg_exec "$group" "$ninf_sites" exec "$sites_set" "$site" env NINF_SERVER="$server" \
      NINF_TRANSPORT=tcp "$client" sweep --methods ninf --min-seconds "$min_seconds" "$n"
    cg_exec "$group" "$ninf_sites" exec "$sites_set" "$site" "$client" ftp "$sink" \
      $((8 * n * n + 8 * n)) $((8 * n)) "$ftp_reps" | grep median
  } | sed "s/^/setup=$setup /" | tee -a "$raw" >&2
}
for n in $sizes; do
  echo "table2.sh: n = $n (link $rate, 100mbit, none)" >&2
  point weak-LAN weak a "$n"
  point strong-LAN strong a "$n"
  point weak-100M weak b "$n"
  point strong-wire strong d "$n"
done
keep_raw
/usr/bin/python3 "$report" table2 "$raw" "$out"
echo "table2.sh: wrote $out" >&2
