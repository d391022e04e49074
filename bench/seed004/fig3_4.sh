#!/usr/bin/env bash
# bench/seed004/fig3_4.sh - seed 004's Figs. 3/4: a slow client's Linpack
# through Ninf_call to a faster server over a LAN, against the same client
# solving locally, n = 100..1600, the paper's range (--extend measures more,
# which the verdict does not count: the crossover is checked against the
# paper's band within its n).
#
#   bash bench/seed004/fig3_4.sh BUILD_DIR [--out FILE] [--quick] [--sizes LIST]
#       [--extend LIST] [--quota PCT] [--client-cpu CPU] [--server-cpus CPUS]
#       [--rate RATE] [--flops-per-byte F] [--min-seconds S]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file (default a new
# bench/results/seed004/fig3_4-DATE.md); the runs of record go to
# bench/results/seed004/fig3_4.md, with the plot beside it as .png.)
# Root (a control group for the client, ninf-sites for the link).
#
# The set-up, and why:
#
#   weak client: control group on --client-cpu with a CPU quota of --quota %
#     (default 25 %: the paper's Alpha workstation against a J90 on 4 PEs,
#     one quarter of the server), OpenBLAS on 1 thread, in site "c" of
#     ninf-sites; bench/linpack_client runs there, alone:
#       Ninf_call   linpack (A and b in, x out: 8n^2 + 16n bytes a call)
#       Local       LAPACK dgesv (OpenBLAS, blocked), the paper's glub4/gslv4
#       unblocked   dgefa/dgesl (bench/seed004/unblocked.c), Fig. 4's extra curve
#   weaker client (--fig3-quota, default 10 %; "" for none): the same on a
#     smaller quota, Ninf_call and blocked Local only: Fig. 3's SPARC
#     clients, slower than the Alpha, whose crossover came earlier
#     (n = 200-400) and whose Ninf_call was about the same
#   strong server: ninfd pinned (taskset) to --server-cpus, 1 slot, all of its
#     cores for the one call, in the hub. Default CPU 1 alone, disjoint from
#     the client's CPU 0: the server never shares a core with the client,
#     and the client's quota never limits it. A machine with more cores runs
#     a more faithful size (e.g. --server-cpus 4-7 --client-cpu 0).
#   LAN: the site's link, tc tbf at --rate both ways, no delay. "auto" keeps
#     the paper's ratio of server speed to link speed: the J90 reached
#     600 Mflops at n = 1600 (Fig. 3's text) and Ninf_call moved 2.5 MB/s
#     from the Alpha to it (Table 2), 240 flops per byte; the server's own
#     speed is measured first (dgesv, n = 1600, on its CPUs) and divided by
#     --flops-per-byte.
#
# Each point repeats its solve for --min-seconds of wall time (at least
# once): the quota runs the client in bursts of 100 ms periods, so only a
# window of many periods shows its average speed. The report (Mflops
# against n per curve, the crossover n of each Local curve, the verdict
# against the paper's claim) is made by bench/seed004/single_report.py.
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=bench/cgroup.sh
source "$(dirname "$0")/../cgroup.sh"
bench_declare seed004/fig3_4 "Seed 004 Figs. 3/4: a weak client's Ninf_call Linpack against its local solves."
bench_option --sizes LIST sizes "100 200 300 400 500 600 800 1000 1200 1400 1600" "100 400 1000 1600" "Linpack n"
bench_option --extend LIST extend "" "" "more n, measured only if Ninf_call has not passed blocked Local by the last of --sizes (shown, not counted by the verdict)"
bench_option --quota PCT quota 25 "" "the client's CPU quota, percent of one CPU"
bench_option --fig3-quota PCT fig3_quota 10 "" "a weaker client's quota (Fig. 3's SPARC clients: Ninf_call and blocked Local), \"\" for none"
bench_option --client-cpu CPU client_cpu 0 "" "the client's CPU"
bench_option --server-cpus CPUS server_cpus 1 "" "ninfd's CPUs (taskset list); its call gets all of them"
bench_option --rate RATE rate auto "" "the LAN link (tc's spelling), or auto: server Mflops / flops-per-byte"
bench_option --flops-per-byte F fpb 240 "" "server flops per byte of link for --rate auto (the paper's J90: 600 Mflops / 2.5 MB/s)"
bench_option --min-seconds S min_seconds 2 0.5 "seconds each point repeats its solve"
bench_parse "$@"
bench_need_root "cgroups and ninf-sites"
bench_need server/ninfd bench/linpack_client sites/ninf-sites stubs/registry/linpack
client="$build/bench/linpack_client"
report="$(dirname "$0")/single_report.py"
raw="$work/raw.txt"
png="${out%.md}.png"
[[ ! -e $png ]] || { echo "$0: $png exists; choose another --out" >&2; exit 2; }

server_threads=$(taskset -c "$server_cpus" nproc)
echo "fig3_4.sh: the server's speed (dgesv n = 1600 on CPUs $server_cpus, $server_threads threads)" >&2
server_mflops=$(OPENBLAS_NUM_THREADS=$server_threads taskset -c "$server_cpus" "$client" sweep \
  --methods blocked --min-seconds 1 1600 | sed -n 's/.* mflops=\([0-9.]*\).*/\1/p')
if [[ $rate == auto ]]; then
  # Mflops / (flops per byte) = MB/s; x 8 = Mbit/s.
  rate=$(awk -v m="$server_mflops" -v f="$fpb" 'BEGIN { printf "%dmbit", m / f * 8 + 0.5 }')
fi
{
  echo "# command=bash bench/seed004/fig3_4.sh $*"
  echo "# date=$(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# machine=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1) ($(nproc) vCPUs)"
  echo "# commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "# quick=$quick"
  echo "# quota=$quota"
  echo "# fig3_quota=$fig3_quota"
  echo "# client_cpu=$client_cpu"
  echo "# server_cpus=$server_cpus"
  echo "# server_threads=$server_threads"
  echo "# server_mflops=$server_mflops"
  echo "# rate=$rate"
  echo "# flops_per_byte=$fpb"
  echo "# min_seconds=$min_seconds"
} >"$raw"
# The raw log beside the report even when a step fails (then without a report).
keep_raw() { [[ -e $raw_log ]] || cp "$raw" "$raw_log"; }
bench_on_exit keep_raw

sites_up s4f --site c:"$rate":0
start_bg ninfd "$work/ready" "$work/ninfd.log" in_site hub taskset -c "$server_cpus" \
  "$build/server/ninfd" --port 0 --listen 0.0.0.0 --insecure --unix-socket "" \
  --registry "$build/stubs/registry" --ready-file "$work/ready" --log-level warn \
  --slots 1 --thread-budget fixed --threads-per-job "$server_threads"
server="$(site_addr hub):$(head -n1 "$work/ready")"
cg_make client "$client_cpu" "$quota"
[[ -z $fig3_quota ]] || cg_make weaker "$client_cpu" "$fig3_quota"

# sweep GROUP SWEEP-ARGS...: the curves at each n, in GROUP and the site;
# the weaker client's lines are tagged client=weaker.
sweep() {
  local group=$1 tag=""
  shift
  [[ $group == client ]] || tag="client=$group "
  cg_exec "$group" "$ninf_sites" exec "$sites_set" c env NINF_SERVER="$server" NINF_TRANSPORT=tcp \
    OPENBLAS_NUM_THREADS=1 "$client" sweep --min-seconds "$min_seconds" --unblocked-max 1600 "$@" |
    sed "s/^/$tag/" | tee -a "$raw" >&2
}
echo "fig3_4.sh: client quota $quota % of CPU $client_cpu, server CPUs $server_cpus" \
  "($server_mflops Mflops), link $rate; n = $sizes" >&2
# shellcheck disable=SC2086  # word lists
sweep client $sizes
if [[ -n $extend && $(/usr/bin/python3 "$report" crossover "$raw" blocked) == none ]]; then
  echo "fig3_4.sh: no crossover against blocked Local by n = ${sizes##* }: n = $extend" >&2
  # shellcheck disable=SC2086
  sweep client --methods ninf,blocked $extend
fi
if [[ -n $fig3_quota ]]; then
  echo "fig3_4.sh: the weaker client, quota $fig3_quota %" >&2
  # shellcheck disable=SC2086
  sweep weaker --methods ninf,blocked $sizes
fi
keep_raw
/usr/bin/python3 "$report" fig3_4 "$raw" "$out" --png "$png"
echo "fig3_4.sh: wrote $out" >&2
