# shellcheck shell=bash
# bench/seed004/multi.sh - the one driver behind seed 004's multi-client
# items (Tables 3-8, Figs. 6 and 8), sourced by bench/seed004/ITEM.sh after
# it sets `item`. Sourced, never run.
#
# What makes these set-ups faithful to the paper (docs/loadtest.md, section
# "Seed 004, item by item"; the audit's section 6):
#   - server and clients in their own control groups on their own CPUs
#     (bench/cgroup.sh); ninfd sizes its cores from that cpuset, and the
#     server's utilization is its group's measured CPU time, not booked time;
#   - one time scale tau, measured: a calibration call at c = 1 on the 1-PE
#     server gives our per-core Mflops F, and tau = our compute time / the
#     paper's (the J90 computed ~170 Mflops per PE: Table 3's call time less
#     its transfer time). The paper's step s = 3 s becomes 3 tau, its LAN
#     (2.5 MB/s) and WAN (0.13 MB/s) become links whose transfer takes tau
#     times the paper's, so T_call / s and transfer / T_call are the paper's;
#   - the paper's client model (p = 1/2 every s), random first-tick phases
#     when ninf-loadtest has them, points of --duration seconds and at
#     least 5 of their longest call (report.py duration);
#   - links that share as the paper's did: one LAN link for every client,
#     and for Fig. 8 the server's own access link that every site crosses
#     (ninf-sites serve); WAN links paced by their relays, in turn for every
#     connection (ninf-sites --fair: no tail drop, no flow starved);
#   - the paper's two server versions: 1-PE = one slot per core, one thread
#     each (`split`); 4-PE = one slot, every core (`--slots 1`, `split`);
#   - the `linpack` call of the standard library (A and b in, only x back)
#     when ninf-loadtest knows the workload `linpack-x`, else dgesv (16 n^2
#     bytes: the rate is doubled so the transfer time stays the paper's).
# Every point is one ninf-loadtest run; its calls, its summary and the
# server's and clients' CPU time go into $work, and report.py ITEM writes
# the table, the plot and the verdict from them.
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail
seed_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$seed_dir/../lib.sh"
# shellcheck source=bench/cgroup.sh
source "$seed_dir/../cgroup.sh"

ncpu=$(nproc)
# Default layouts (the brief of issue 30): a J90 analog of 4 server cores
# with the clients elsewhere when the machine has room, else every CPU for
# the server with the clients sharing them (measured and reported).
if ((ncpu >= 8)); then
  j90_server="0-3" j90_clients="4-$((ncpu - 1))"
  smp_server="0-$((ncpu - 3))" smp_clients="$((ncpu - 2))-$((ncpu - 1))"
elif ((ncpu >= 2)); then
  j90_server="0-$((ncpu - 1))" j90_clients="0-$((ncpu - 1))"
  smp_server="0-$((ncpu - 1))" smp_clients="0-$((ncpu - 1))"
else
  j90_server="0" j90_clients="0" smp_server="0" smp_clients="0"
fi

case $item in
  table3) bench_declare seed004/table3 "Seed 004 Table 3: LAN Linpack, the 1-PE server version, c = 1..16." ;;
  table4) bench_declare seed004/table4 "Seed 004 Table 4: LAN Linpack, the 4-PE server version (beside 1-PE), c = 1..16." ;;
  table5) bench_declare seed004/table5 "Seed 004 Table 5: SMP server, task-parallel 1-PE Linpack, c up to the cores." ;;
  fig6) bench_declare seed004/fig6 "Seed 004 Fig. 6: per-call Mflops over clients c x threads per call t." ;;
  table6) bench_declare seed004/table6 "Seed 004 Table 6: WAN single site, 1-PE Linpack, c = 1..16." ;;
  table7) bench_declare seed004/table7 "Seed 004 Table 7: WAN single site, 4-PE Linpack (beside 1-PE), c = 1..16." ;;
  fig8) bench_declare seed004/fig8 "Seed 004 Fig. 8: WAN, four unequal sites against one, 4-PE, n = 600 scaled." ;;
  table8) bench_declare seed004/table8 "Seed 004 Table 8: EP, LAN and single-site WAN, 1-PE, c = 1..16." ;;
  *) echo "multi.sh: unknown item '$item'" >&2; exit 2 ;;
esac

# The paper's sizes, scaled by --scale (our cores are ~100x a J90 PE: n = 600
# would be a 10 ms call, too short to measure a client model with).
case $item in
  table5 | fig6 | fig8) paper_sizes="600" ;;
  table8) paper_sizes="" ;;
  *) paper_sizes="600 1000 1400" ;;
esac
case $item in
  table5 | fig6) def_server=$smp_server def_clients=$smp_clients ;;
  *) def_server=$j90_server def_clients=$j90_clients ;;
esac
case $item in
  table3 | table6) def_versions="1pe" ;;
  table4 | table7) def_versions="4pe 1pe" ;;
  table5 | table8) def_versions="1pe" ;;
  fig6) def_versions="fixed" ;;
  fig8) def_versions="4pe" ;;
esac
case $item in
  table5) def_c="4 8 16" quick_c="8 16" ;;
  fig8) def_c="1 4" quick_c="1" ;;
  *) def_c="1 2 4 8 16" quick_c="1 4" ;;
esac

bench_option --server-cpus LIST server_cpus "$def_server" "" "the server's cpuset (the paper's PEs: a 16-core machine runs the J90 as 0-3)"
bench_option --client-cpus LIST client_cpus "$def_clients" "" "the clients' cpuset (the same as the server's when they must share)"
if [[ $item != table8 ]]; then
  bench_option --scale G scale 2 1 "n = G x the paper's n"
  bench_option --sizes LIST sizes "" "" "n, overriding --scale (default: the paper's n x G)"
  bench_option --interval S interval auto "" "seconds per step s (auto: 3 s x tau, the paper's T_call/s)"
fi
bench_option --clients LIST clients "$def_c" "$quick_c" "client counts c (per site for fig8; Table 5's are scaled by cores/16)"
bench_option --probability P probability 0.5 "" "chance of a call at each step (the paper: 1/2)"
bench_option --duration S duration 90 8 "seconds of steps per point"
bench_option --versions LIST versions "$def_versions" "" "server versions: 1pe (a slot per core, 1 thread), 4pe (1 slot, every core), fixed (fig6)"
def_adm=default
[[ $item != fig8 ]] || def_adm=both
bench_option --admission LIST admission "$def_adm" "" "ninfd's admission: start, arrival, both, or default (ninfd's own; needs the admission setting)"
case $item in
  table3 | table4 | table5 | fig6)
    bench_option --lan-rate RATE lan_rate auto "" "each client's LAN link (auto: transfer = the paper's 2.5 MB/s share of a call; none: loopback)"
    bench_option --lan-links N lan_links 1 "" "LAN links, client i behind link i mod N (1: every client shares the server's one link, as the paper's LAN clients shared the J90's; auto: one per client)" ;;
esac
case $item in
  table6 | table7 | fig8)
    bench_option --wan-rate RATE wan_rate auto "" "the WAN link of site a (auto: the paper's 0.13 MB/s share of a call)"
    bench_option --wan-delay MS wan_delay 5 "" "ms each way on site a's link" ;;
esac
case $item in
  fig6) bench_option --threads LIST threads "" "1 2" "threads per call t (default: 1 2 4 .. 2 x server cores)" ;;
  fig8)
    bench_option --sites SPEC sites "a:1:1 b:2:0.6 c:0.5:2 d:1.5:0.4" "" "ID:RATE_FACTOR:DELAY_FACTOR of each site against site a (Fig. 7's four unequal links)"
    bench_option --server-site SPEC server_site "3.2:0.2" "" "RATE_FACTOR:DELAY_FACTOR of the server's own access link against site a's, which every site's calls cross (the shared path; 3.2: what the paper's numbers imply, see the README); none: the server in the hub, no shared path" ;;
  table8)
    bench_option --m M m 28 22 "EP with 2^M pairs"
    bench_option --wan-rate RATE wan_rate 10mbit "" "the WAN link"
    bench_option --wan-delay MS wan_delay 20 "" "ms each way on the WAN link" ;;
esac
# The command as given (without --out), for the report's first line.
given_args=()
skip_next=0
for a in "${@:2}"; do
  if ((skip_next)); then skip_next=0; continue; fi
  if [[ $a == --out ]]; then skip_next=1; continue; fi
  given_args+=("$a")
done
bench_parse "$@"
bench_need server/ninfd loadtest/ninf-loadtest stubs/registry/dgesv stubs/registry/ep
bench_need_root "control groups and ninf-sites"

lt=$build/loadtest/ninf-loadtest
# The help texts, read once: `--help | grep -q` under pipefail fails when
# grep stops reading early and the program dies of SIGPIPE.
lt_help=$("$lt" --help 2>&1 || true)
ninfd_help=$("$build/server/ninfd" --help 2>&1 || true)
lt_has() { grep -q -- "$1" <<<"$lt_help"; }
ninfd_has() { grep -q -- "$1" <<<"$ninfd_help"; }
notes=$work/notes.txt
: >"$notes"
note() { echo "$*" | tee -a "$notes" >&2; }

# What this build of ninf-loadtest and ninfd can do (issue 30's other parts
# land separately): use it when there, and say so when not.
workload=linpack
if lt_has linpack-x; then workload=linpack-x; else
  note "ninf-loadtest has no workload linpack-x: dgesv (A in and out: 16 n^2 bytes) stands in, its link rate doubled"
fi
phase_args=()
if lt_has --phase; then phase_args=(--phase random); else
  note "ninf-loadtest has no --phase: every client ticks together (arrivals in Binomial(c, p) bursts)"
fi
[[ $admission == both ]] && admission="start arrival"
if ! ninfd_has --admission; then
  if [[ $admission != start && $admission != default ]]; then note "ninfd has no admission setting: ran the admission it has (a call's slot at its start) only"; fi
  admission=start  # what ninfd without the setting does: a call takes its slot when it starts
elif [[ $admission == default ]]; then
  admission=$(sed -n 's/.*NINF_ADMISSION, default \([a-z]*\)[],].*/\1/p' <<<"$ninfd_help" | head -n1)
  [[ -n $admission ]] || { echo "$0: cannot read ninfd's default admission" >&2; exit 1; }
fi
[[ $item == table8 ]] && [[ -z ${sizes:-} ]] && sizes=$m

# ---- control groups --------------------------------------------------------

cg_make server "$server_cpus"
cg_make clients "$client_cpus"
server_cores=$(cg_cpus server)
client_cores=$(cg_cpus clients)
note "server cpuset $server_cpus ($server_cores cores), clients cpuset $client_cpus ($client_cores cores)"
if [[ $server_cpus == "$client_cpus" ]]; then
  note "the clients share the server's CPUs (this machine has $ncpu): their CPU time is measured and reported"
fi

# cg_bg GROUP COMMAND...: COMMAND in the background inside GROUP, same pid
# (sh moves itself in, then execs), tracked for cleanup; sets bg_pid.
cg_bg() {
  local name=$1 procs="" dir
  shift
  for dir in $(_cg_dirs "$name"); do procs+=" $dir/cgroup.procs"; done
  # shellcheck disable=SC2016
  sh -c 'for p in $0; do echo $$ >"$p"; done; exec "$@"' "$procs" "$@" &
  bg_pid=$!
  bench_track "$bg_pid"
}

# ---- the server --------------------------------------------------------------

version_args() {
  case $1 in
    1pe) echo "--slots $server_cores --thread-budget split" ;;
    4pe) echo "--slots 1 --thread-budget split" ;;
    fixed-*) echo "--slots 256 --thread-budget fixed --threads-per-job ${1#fixed-}" ;;
    *) echo "multi.sh: unknown version $1" >&2; exit 2 ;;
  esac
}

server_pid=""
server_addr=""
# The LAN items' per-client links: --server HUB_SIDE:3000 --netns SITE per
# link (client i takes entry i mod N of both lists), sampled once.
lan_servers=()
# server_start VERSION ADMISSION WHERE: ninfd in the server group, on
# loopback (WHERE = local) or in the sites' hub (WHERE = hub).
server_start() {
  local version=$1 adm=$2 where=$3 ready=$work/ninfd.ready args
  # shellcheck disable=SC2207
  args=($(version_args "$version"))
  ninfd_has --admission && args+=(--admission "$adm")
  rm -f "$ready"
  if [[ $where != local && $where != hub ]]; then
    # In a site (Fig. 8's server behind its own access link): on its
    # loopback, reached through the relays `ninf-sites serve` made.
    cg_bg server "$ninf_sites" exec "$sites_set" "$where" "$build/server/ninfd" --port 3000 \
      --unix-socket "" --ready-file "$ready" --registry "$build/stubs/registry" \
      --log-level warn "${args[@]}" 2>>"$work/ninfd.log"
    wait_ready "$ready" "$bg_pid" ninfd
    server_addr=127.0.0.1:3000
  elif [[ $where == local ]]; then
    cg_bg server "$build/server/ninfd" --port 0 --unix-socket "" --ready-file "$ready" \
      --registry "$build/stubs/registry" --log-level warn "${args[@]}" 2>>"$work/ninfd.log"
    wait_ready "$ready" "$bg_pid" ninfd
    server_addr=127.0.0.1:$(head -n1 "$ready")
  else
    cg_bg server "$ninf_sites" exec "$sites_set" hub "$build/server/ninfd" --port 3000 \
      --listen 0.0.0.0 --insecure --unix-socket "" --ready-file "$ready" \
      --registry "$build/stubs/registry" --log-level warn "${args[@]}" 2>>"$work/ninfd.log"
    wait_ready "$ready" "$bg_pid" ninfd
    server_addr=127.0.0.1:3000
  fi
  server_pid=$bg_pid
}
server_stop() {
  [[ -z $server_pid ]] || bench_stop "$server_pid"
  server_pid=""
}

# ---- one point -----------------------------------------------------------------

points=$work/points.csv
echo "id,item,label,version,admission,site,workload,n,c,threads,interval,probability,duration,wall_s,server_cores,server_cpu_s,client_cores,client_cpu_s,link_rate,link_delay_ms,failed,lan_shared,shared_path" >"$points"
# What the report must know of the links (report.py: a claim the set-up
# cannot test is "not testable here"): every LAN client behind one link;
# sites whose calls cross one shared path to the server.
lan_shared=0
shared_path=0
# Statistics sampled from the hub, when the server is in a site.
sample_args=()
point_id=0
total_points=0 # announce sets it
run_started=$(date +%s)
# progress ID LABEL N C: the point done, and how far the run is, on stderr:
# a count and the time left at the points' mean so far.
progress() {
  local id=$1 now elapsed
  now=$(date +%s)
  elapsed=$((now - run_started))
  local of="" left=""
  ((total_points == 0)) || of=" of $total_points"
  if ((total_points > id && id > 0)); then
    local secs=$((elapsed * (total_points - id) / id))
    if ((secs < 120)); then left=", about $secs s left"; else left=", about $(((secs + 59) / 60)) min left"; fi
  fi
  echo "$0: point $id$of ($2 n=$3 c=$4) done; ${elapsed} s in$left" >&2
}
# point LABEL VERSION ADM SITE N C T INTERVAL RATE DELAY [ninf-loadtest args]:
# one run of ninf-loadtest in the clients' group (in the hub when sites are
# up, so that its sampling reaches the server), with the CPU time of both
# groups around it.
point() {
  local label=$1 version=$2 adm=$3 site=$4 n=$5 c=$6 t=$7 s=$8 rate=$9 delay=${10} id secs
  shift 10
  secs=$(point_secs "$version" "$n" "$c")
  point_id=$((point_id + 1))
  id=$point_id
  local runner=() wl=$workload extra=()
  [[ $item == table8 ]] && wl=ep
  [[ -z $sites_set ]] || runner=("$ninf_sites" exec "$sites_set" hub)
  # In a site's hub `ip netns exec` mounts a sysfs of its own, without the
  # control groups: the tool cannot read them there, this script does.
  if [[ -z $sites_set ]] && lt_has --server-cgroup; then
    # The group's directory that holds its CPU time (v2: the one; v1: cpuacct's).
    # (v1's cpu hierarchy has a cpu.stat too, without usage_usec.)
    local d acct=""
    for d in $(_cg_dirs server); do
      if [[ $cg_version == 2 || -e $d/cpuacct.usage ]]; then acct=$d; break; fi
    done
    [[ -z $acct ]] || extra+=(--server-cgroup "$acct" --server-cpus "$server_cores")
  fi
  if lt_has --series; then extra+=(--series "$work/series-$id.csv"); fi
  local s0 c0 t0 t1 s1 c1 failed=0
  s0=$(cg_usage_usec server) c0=$(cg_usage_usec clients) t0=$(date +%s.%N)
  local servers=(--server "$server_addr")
  [[ ${#lan_servers[@]} -eq 0 ]] || servers=("${lan_servers[@]}")
  cg_bg clients "${runner[@]}" "$lt" "${servers[@]}" "${sample_args[@]}" --workload "$wl" --size "$n" \
    --clients "$c" --interval "$s" --probability "$probability" --duration "$secs" -q \
    "${phase_args[@]}" "${extra[@]}" --label "$label" --csv "$work/calls-$id.csv" \
    --summary "$work/summary-$id.csv" --table "$work/table.md" "$@" >"$work/lt-$id.txt" 2>>"$work/lt.log"
  local pid=$bg_pid
  wait "$pid" || failed=1
  bench_stop "$pid"
  t1=$(date +%s.%N) s1=$(cg_usage_usec server) c1=$(cg_usage_usec clients)
  [[ $failed == 0 ]] || echo "$0: calls failed at $label n=$n c=$c (see lt.log in the data folder)" >&2
  progress "$id" "$label" "$n" "$c"
  echo "$id,$item,$label,$version,$adm,$site,$wl,$n,$c,$t,$s,$probability,$secs,$(echo "$t1 - $t0" | bc),$server_cores,$(echo "scale=3; ($s1 - $s0) / 1000000" | bc),$client_cores,$(echo "scale=3; ($c1 - $c0) / 1000000" | bc),$rate,$delay,$failed,$lan_shared,$shared_path" >>"$points"
}

# point_secs VERSION N C: the seconds of steps a point runs: --duration, and
# at least 5 of its longest call (report.py duration: C calls at once of the
# paper's c = 1 call at this n, on our time scale tau). Before calibration,
# and for EP, --duration.
point_secs() {
  if [[ $item == table8 ]]; then
    # EP: c calls share the server's cores, each as long as ep_call_s alone.
    if [[ -n ${ep_call_s:-} ]]; then
      awk -v c="$3" -v k="$server_cores" -v t="$ep_call_s" -v m="$duration" 'BEGIN {
        s = 5 * int((c + k - 1) / k) * t; s = s > m ? s : m; printf "%d\n", s + 0.999 }'
    else
      echo "$duration"
    fi
    return
  fi
  if [[ -z ${tau:-} ]]; then echo "$duration"; return; fi
  /usr/bin/python3 "$seed_dir/report.py" duration "$item" "$1" "$(($2 / ${scale:-1}))" "$3" \
    "$tau" "$duration"
}

# ---- calibration: tau, s and the links ----------------------------------------

# The paper's J90 (Table 3, c = 1): per-PE compute ~170 Mflops (call time
# less transfer time), LAN 2.5 MB/s, WAN 0.128 MB/s (Table 6, n = 600).
paper_mflops=170
paper_lan_mbs=2.5
paper_wan_mbs=0.128
if [[ $item == table5 || $item == fig6 ]]; then
  # The SuperSPARC SMP (Table 5, c = 4 <= 16 CPUs, so no sharing): 3.80
  # Mflops per call, 1.18 MB/s: 2.44 s of transfer in a 38 s call, ~4.1
  # Mflops per CPU. Its calls were 13 x the step: nearly a closed loop.
  paper_mflops=4.06
  paper_lan_mbs=1.18
fi
if [[ $item != table8 && -z ${sizes:-} ]]; then
  sizes=""
  for n in $paper_sizes; do sizes+="$((n * scale)) "; done
  sizes=${sizes% }
  [[ $quick == 0 ]] || sizes=${sizes%% *}
fi
n0=${sizes%% *}
calibrate() {
  note "calibrating: 3 calls of $workload n = $n0 at c = 1 on the 1-PE server, loopback"
  server_start 1pe "${admission%% *}" local
  "$lt" --server "$server_addr" --workload "$workload" --size "$n0" --clients 1 --interval 0 \
    --steps 3 -q --csv "$work/calibration.csv" >/dev/null 2>>"$work/lt.log" ||
    { echo "$0: the calibration calls failed:" >&2; tail -n 5 "$work/lt.log" >&2; exit 1; }
  server_stop
  # tau, s, and the bytes per second that make the paper's transfer times.
  read -r F tau s_auto lan_bps wan_bps < <(/usr/bin/python3 "$seed_dir/report.py" calibrate \
    "$work/calibration.csv" "$n0" "$((n0 / ${scale:-1}))" "$paper_mflops" "$paper_lan_mbs" "$paper_wan_mbs")
  note "calibration: $F Mflops per core at n = $n0, tau = $tau (our compute time / the paper's server's at ${paper_mflops} Mflops per PE), s = $s_auto s, LAN ${lan_bps} kbit/s, WAN ${wan_bps} kbit/s"
}

# lan_up PREFIX RATE: the LAN items' links, one per client by default (the
# paper's Alpha workstations each had their own path to the J90, so c
# clients did not share one client's link), no delay; clients connect
# straight to the hub's side of their link. RATE none: loopback, no sites.
lan_up() {
  local prefix=$1 rate=$2 links=$lan_links specs=() i c addr
  if [[ $rate == none ]]; then where=local; return; fi
  if [[ $links == auto ]]; then
    links=1
    for c in $clients; do ((c > links)) && links=$c; done
  fi
  for ((i = 1; i <= links; i++)); do specs+=(--site "l$i:$rate:0"); done
  sites_up "$prefix" "${specs[@]}"
  where=hub
  lan_servers=()
  for ((i = 1; i <= links; i++)); do
    addr=$(site_addr "l$i")
    lan_servers+=(--server "${addr%.2}.1:3000" --netns "$(site_netns "l$i")")
  done
  lan_servers+=(--sample 127.0.0.1:3000)
  if ((links == 1)); then
    lan_shared=1
    note "LAN: one link of $rate, no delay, shared by every client (the paper's LAN clients reached the J90 through its one interface: their per-call MB/s fell with c)"
  else
    note "LAN: $links links of $rate, no delay; client i behind link i mod $links"
  fi
  if [[ $rate == *kbit ]] && ((${rate%kbit} > 10000000)); then
    note "that rate is beyond what an emulated link carries (veth and tc here: a few Gbit/s): transfers take longer than the paper's share; the set-up check shows by how much"
  fi
}

# ---- the items -------------------------------------------------------------------

est_points() { local n=0 x; for x in "$@"; do n=$((n + x)); done; echo "$n"; }
announce() {
  local npoints=$1
  total_points=$npoints
  run_started=$(date +%s)
  note "$npoints points of $duration s: expect about $(((npoints * duration * 13 / 10 + 60) / 60)) min"
}

words() { local a; read -ra a <<<"$1"; echo "${#a[@]}"; }
nsizes=$(words "$sizes")
nclients=$(words "$clients")
nversions=$(words "$versions")
nadm=$(words "$admission")
sites_args=()
case $item in
  table6 | table7 | fig8 | table8)
    note "the links' delay relays (ninf-linkdelay, made by ninf-sites) run outside both groups: their CPU is in neither figure" ;;
esac

case $item in
  table3 | table4 | table5)
    if [[ $item == table5 ]]; then
      # The paper's c = 4 / 8 / 16 on 16 CPUs: c x cores / 16 here.
      scaled=""
      for c in $clients; do scaled+="$(((c * server_cores + 15) / 16)) "; done
      clients=$(echo "$scaled" | tr ' ' '\n' | awk 'NF && !seen[$1]++' | tr '\n' ' ')
      clients=${clients% }
      nclients=$(words "$clients")
      note "Table 5's c scaled to $server_cores cores: c = $clients"
    fi
    announce $((nsizes * nclients * nversions * nadm))
    calibrate
    [[ $interval == auto ]] && interval=$s_auto
    rate=none
    if [[ $lan_rate == auto ]]; then rate="${lan_bps}kbit"; else rate=$lan_rate; fi
    lan_up s4lan "$rate"
    for version in $versions; do
      for adm in $admission; do
        server_start "$version" "$adm" "$where"
        for n in $sizes; do
          for c in $clients; do
            echo "$0: $version admission $adm n = $n c = $c" >&2
            point "$version" "$version" "$adm" lan "$n" "$c" 1 "$interval" "$rate" 0
          done
        done
        server_stop
      done
    done
    ;;
  fig6)
    [[ -n $threads ]] || { threads=1; t=2; while ((t <= 2 * server_cores)); do threads+=" $t"; t=$((t * 2)); done; }
    note "t = $threads threads per call on $server_cores server cores (the paper's SMP had 16 CPUs: scaled, so the c x t = cores diagonal sits at $server_cores; a 16-core server runs the paper's with --server-cpus)"
    announce $((nsizes * nclients * $(words "$threads") * nadm))
    calibrate
    [[ $interval == auto ]] && interval=$s_auto
    if [[ $lan_rate == auto ]]; then rate="${lan_bps}kbit"; else rate=$lan_rate; fi
    lan_up s4f6 "$rate"
    for t in $threads; do
      for adm in $admission; do
        server_start "fixed-$t" "$adm" "$where"
        for n in $sizes; do
          for c in $clients; do
            echo "$0: t = $t admission $adm n = $n c = $c" >&2
            point "t=$t" "fixed-$t" "$adm" lan "$n" "$c" "$t" "$interval" "$rate" 0
          done
        done
        server_stop
      done
    done
    ;;
  table6 | table7)
    announce $((nsizes * nclients * nversions * nadm))
    calibrate
    [[ $interval == auto ]] && interval=$s_auto
    if [[ $wan_rate == auto ]]; then rate="${wan_bps}kbit"; else rate=$wan_rate; fi
    # The paper's WAN calls were long: Table 6's n = 1400, c = 16 call took
    # 1.83 Gflop / 1.25 Mflops = 1466 s. A point ends when its last call does.
    note "the paper's longest WAN call (Table 6, n = 1400, c = 16: 1466 s) is $(echo "1466 * $tau / 1" | bc) s here; a point ends when its last call does, so large c take longer than --duration"
    # --fair: the relay paces the link, in turn for every connection: tbf's
    # tail-drop queue let one of sixteen flows stall for a minute (and its
    # call was lost).
    sites_up s4wan --fair --forward 3000 --site a:"$rate":"$wan_delay"
    note "the link is paced by its relay, in turn for every connection (ninf-sites --fair)"
    for version in $versions; do
      for adm in $admission; do
        server_start "$version" "$adm" hub
        for n in $sizes; do
          for c in $clients; do
            echo "$0: $version admission $adm n = $n c = $c" >&2
            point "$version" "$version" "$adm" a "$n" "$c" 1 "$interval" "$rate" "$wan_delay" --netns "$(site_netns a)"
          done
        done
        server_stop
      done
    done
    ;;
  fig8)
    # Per admission: one site with c, one site with 4c (the same total
    # behind one link), four sites with c each.
    announce $((nsizes * nclients * 3 * nadm))
    calibrate
    [[ $interval == auto ]] && interval=$s_auto
    if [[ $wan_rate == auto ]]; then base_kbps=$wan_bps; else
      base_kbps=$(/usr/bin/python3 -c "import re,sys; m=re.fullmatch(r'([0-9.]+)([kmg]?)bit', sys.argv[1]); print(int(float(m[1]) * {'': 1e-3, 'k': 1, 'm': 1e3, 'g': 1e6}[m[2]]))" "$wan_rate")
    fi
    site_rates=()
    for spec in $sites; do
      IFS=: read -r id rf df <<<"$spec"
      r=$(echo "$base_kbps * $rf / 1" | bc)
      d=$(echo "($wan_delay * $df + 0.5) / 1" | bc)
      sites_args+=(--site "$id:${r}kbit:$d")
      site_rates+=("$id:$r:$d")
      note "site $id: ${r} kbit/s, $d ms each way"
    done
    server_where=hub
    if [[ $server_site != none ]]; then
      # Fig. 7's link values are not in the text we have; its sites reached
      # ETL's J90 over paths that met at ETL's own access link. That link is
      # a site of its own here, which every site's calls cross. Its rate: the
      # paper's total "far above" one site's (>= 3x) with site a losing only
      # 9-18 % (c = 1) is, with the sites' rates 1 : 2 : 0.5 : 1.5 shared
      # fairly, a path of 3-3.3 x site a's: at 3.2, c takes its 0.5 and a,
      # b and d 0.9 each (a loses 10 %), 3.2 x one site in all.
      IFS=: read -r rf df <<<"$server_site"
      r=$(echo "$base_kbps * $rf / 1" | bc)
      d=$(echo "($wan_delay * $df + 0.5) / 1" | bc)
      sites_args+=(--site "etl:${r}kbit:$d")
      note "server site etl: ${r} kbit/s, $d ms each way (every site's calls cross it: the shared path; $rf x site a's rate, what the paper's total and site a's drop imply under fair sharing, not Fig. 7's values)"
      sites_up s4f8 --fair "${sites_args[@]}"
      "$ninf_sites" serve "$sites_set" etl 3000 >&2
      server_where=etl
      shared_path=1
      sample_args=(--sample "$(site_addr etl):3000")
    else
      sites_up s4f8 --fair --forward 3000 "${sites_args[@]}"
    fi
    note "every link is paced by its relays, in turn for every connection (ninf-sites --fair)"
    first=${sites%% *}; first=${first%%:*}
    all_ns=()
    for spec in $sites; do all_ns+=(--netns "$(site_netns "${spec%%:*}")"); done
    r_first=${site_rates[0]#*:}; r_first=${r_first%%:*}kbit
    declare -A ran=()
    for adm in $admission; do
      server_start 4pe "$adm" "$server_where"
      for n in $sizes; do
        for c in $clients; do
          echo "$0: admission $adm n = $n c = $c per site" >&2
          # One site with 4 x 1 clients is also one site with c = 4: once.
          for cc in "$c" $((4 * c)); do
            [[ -z ${ran["$adm $n $cc"]:-} ]] || continue
            ran["$adm $n $cc"]=1
            point one-site 4pe "$adm" "$first" "$n" "$cc" 1 "$interval" "$r_first" "$wan_delay" --netns "$(site_netns "$first")"
          done
          point four-sites 4pe "$adm" all "$n" $((4 * c)) 1 "$interval" "${site_rates[*]}" "" "${all_ns[@]}"
        done
      done
      server_stop
    done
    ;;
  table8)
    announce $((nclients * 2 * nadm))
    interval=0
    # One call alone, for the points' length (five of the longest call).
    server_start 1pe "${admission%% *}" local
    "$lt" --server "$server_addr" --workload ep --size "$m" --clients 1 --interval 0 --steps 1 \
      -q --csv "$work/ep-alone.csv" >/dev/null 2>>"$work/lt.log" ||
      { echo "$0: the EP call alone failed:" >&2; tail -n 5 "$work/lt.log" >&2; exit 1; }
    server_stop
    ep_call_s=$(awk -F, 'NR == 2 { print $5 }' "$work/ep-alone.csv")
    note "one EP call of 2^$m pairs alone: $ep_call_s s; a point lasts at least five of its longest call (c / $server_cores of them at once)"
    sites_up s4ep --fair --forward 3000 --site a:"$wan_rate":"$wan_delay"
    for adm in $admission; do
      server_start 1pe "$adm" hub
      for c in $clients; do
        echo "$0: admission $adm c = $c" >&2
        point LAN 1pe "$adm" hub "$m" "$c" 1 0 none 0
        point WAN 1pe "$adm" a "$m" "$c" 1 0 "$wan_rate" "$wan_delay" --netns "$(site_netns a)"
      done
      server_stop
    done
    ;;
esac

# ---- the report -------------------------------------------------------------------

plot="${out%.md}.png"
cmdline="bash bench/seed004/$item.sh $(basename "$build")"
for a in "${given_args[@]}"; do
  if [[ $a == *" "* ]]; then cmdline+=" \"$a\""; else cmdline+=" $a"; fi
done
{
  /usr/bin/python3 "$seed_dir/report.py" render "$item" "$work" \
    --command "$cmdline" --plot "$plot" --notes "$notes" \
    --machine "$ncpu cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))" \
    --commit "$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')" \
    --date "$(date -u +%Y-%m-%d)" ${quick:+--quick "$quick"}
  echo
  echo "Every run, in ninf-loadtest's table form:"
  echo
  cat "$work/table.md" 2>/dev/null || echo "(none)"
} >"$out"
# The raw data, so that the report can be rendered again (report.py render
# ITEM DIR) and the verdicts tested on it.
mkdir -p "${out%.md}.data"
cp "$work"/points.csv "$work"/notes.txt "$work"/calls-*.csv "${out%.md}.data/" 2>/dev/null || true
cp "$work"/summary-*.csv "$work"/series-*.csv "$work"/lt.log "$work"/ninfd.log "${out%.md}.data/" 2>/dev/null || true
echo "$0: wrote $out (data in ${out%.md}.data/)" >&2
