#!/usr/bin/env bash
# bench/peers.sh - Ninf side by side with gRPC C++, ZeroMQ and Dask
# distributed (issue 32 part 1): the same workloads, the same measurement
# rules, on one host and across two network namespaces.
#
#   bash bench/peers.sh BUILD_DIR [--out FILE] [--quick] [--no-netns]
#       [--sizes LIST] [--dgesv LIST] [--clients LIST] [--seconds S]
#       [--reps R] [--null-reps R] [--peers LIST]
#
# BUILD_DIR is configured with -Dpeers=true (bench/peers/meson.build).
# Workloads, each peer's client measuring them the same way (warm-up calls,
# then timed repeats; median, min, p90; bench/peers/peer_bench.h):
#   null       a call with no arguments;
#   echo SIZE  SIZE bytes to the server and back into the caller's buffer;
#   dgesv N    A x = b for a random n x n system, A and b from the caller's
#              arrays, LAPACK's dgesv on the server, x into the caller's b;
#   rate K     K client processes calling null for a fixed window (wall
#              clock, so that the processes count the same seconds), the
#              sum of their calls/s.
# Peers: ninf (GridRPC function handles: one running executable per handle,
# as every other peer keeps one running server), ninf-oneshot (Ninf_call,
# an executable per call), ninf-fixed (the handles again, calls/s rows only,
# on a ninfd with thread_budget = "fixed": no core gating, the yardstick of
# work-conserving admission at the default budget), grpc (callback server, bytes fields, pooled
# messages), zeromq
# (REQ/REP, zero-copy sends), dask (scheduler + one worker process with one
# thread per core, scatter for arrays of 1 MiB and more), and raw (the
# ping-pong baseline, over the transport Ninf takes in the placement:
# bench/raw_pingpong --unix on one host, where Ninf's client and ninfd talk
# over the Unix-domain socket; bench/peers/raw_tcp's server and client
# across the veth pair, TCP with TCP_NODELAY on both ends as Ninf's. Like
# Ninf's processes, raw's are not pinned: the scheduler places both. Raw is
# measured before the placement's peers and again after them, and the
# report keeps the lower median: the floor, not a sample of the machine's
# noise.)
#
# Placements: host (everything on loopback; each peer uses the same-host
# path it has, which for Ninf means its Unix-domain socket and shared
# memory) and veth (root: the server in site s1 of ninf-sites, the client
# in the hub, joined by a veth pair with no shaping: the TCP path). One
# peer's server runs at a time. Every server gets OPENBLAS_NUM_THREADS =
# cores and the OpenBLAS kernels of `ninfd --openblas-core` (bench/lib.sh),
# so every dgesv runs the same kernels.
#
# The report (bench/peers/report.py) is one table, rows = workload x
# placement, a column per peer, Ninf's speed against the best peer and a
# verdict; a PNG plot next to it; the raw log next to that.
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
# --no-netns is a switch, which bench_option does not declare: taken here.
netns=1
args=()
for a in "$@"; do
  if [[ $a == --no-netns ]]; then netns=0; else args+=("$a"); fi
done
bench_declare peers "Ninf against gRPC C++, ZeroMQ and Dask: null, echo, dgesv, calls/s; host and veth. --no-netns: loopback only."
bench_option --sizes LIST sizes 1K,64K,1M,16M,256M 1K,64K "echo sizes"
bench_option --dgesv LIST dgesv_sizes 1000,2000,4000 200 "dgesv n"
bench_option --clients LIST clients 1,4,16 1,4 "concurrent client processes"
bench_option --seconds S seconds 5 1 "each concurrency window"
bench_option --reps R reps 5 3 "timed echo and dgesv calls (after 1 warm-up)"
bench_option --null-reps R null_reps 1000 50 "timed null calls (after a tenth as warm-up)"
bench_option --peers LIST peers ninf,ninf-oneshot,ninf-fixed,grpc,zeromq,dask "" "peers to run"
bench_parse "${args[@]}"
bench_need server/ninfd bench/raw_pingpong bench/peers/ninf_client bench/peers/grpc_server \
  bench/peers/grpc_client bench/peers/zmq_server bench/peers/zmq_client bench/peers/raw_tcp
if ! /usr/bin/python3 -c 'import distributed, scipy' 2>/dev/null; then
  echo "$0: /usr/bin/python3 lacks distributed or scipy (scripts/deps.sh)" >&2
  exit 1
fi
[[ $netns -eq 0 ]] || bench_need_root "the veth placement (ninf-sites); --no-netns skips it"

cores=$(nproc)
export OPENBLAS_NUM_THREADS=$cores
peer_dir="$here/peers"
raw="$work/raw.txt"
# A hung peer fails the run instead of hanging it: every client process
# gets this many seconds (a 4000 x 4000 dgesv moves 128 MB and solves in
# about a second here, so the limit only catches a peer that stopped).
limit=$((quick ? 120 : 900))
IFS=, read -r -a size_list <<<"$sizes"
IFS=, read -r -a dgesv_list <<<"$dgesv_sizes"
IFS=, read -r -a client_list <<<"$clients"
IFS=, read -r -a peer_list <<<"$peers"

# ---- servers: start_server PEER PLACE sets `address` (the client's form) --

server_host() {
  if [[ $1 == host ]]; then echo 127.0.0.1; else site_addr s1; fi
}

# COMMAND on the server's side of PLACE, in the background (start_bg).
start_side() {
  local what=$1 ready=$2 place=$3
  shift 3
  if [[ $place == host ]]; then
    start_bg "$what" "$ready" "$work/$what.log" "$@"
  else
    start_bg "$what" "$ready" "$work/$what.log" in_site s1 "$@"
  fi
}

start_server() {
  local peer=$1 place=$2 host
  host=$(server_host "$place")
  server_pids=()
  case $peer in
    ninf | ninf-oneshot | ninf-fixed)
      # 16 clients calling at once need 16 slots (20: room for a last
      # process's executables still stopping); the thread budget stays adaptive
      # (a lone dgesv gets every core), but for ninf-fixed.
      local budget=adaptive
      [[ $peer == ninf-fixed ]] && budget=fixed
      if [[ $place == host ]]; then
        start_daemon -- --slots 20 --thread-budget "$budget"
        address=$NINF_SERVER
      else
        start_side ninfd "$work/ninfd.ready" veth "$build/server/ninfd" --port 0 \
          --ready-file "$work/ninfd.ready" --registry "$build/stubs/registry" --unix-socket "" \
          --slots 20 --thread-budget "$budget" --listen "$host" --insecure --log-level warn
        address="$host:$(head -n1 "$work/ninfd.ready")"
      fi
      server_pids+=("$bg_pid") ;;
    grpc)
      start_side grpc_server "$work/grpc.ready" "$place" "$build/bench/peers/grpc_server" \
        --listen "$host:0" --ready-file "$work/grpc.ready"
      server_pids+=("$bg_pid")
      address="$host:$(head -n1 "$work/grpc.ready")" ;;
    zeromq)
      start_side zmq_server "$work/zmq.ready" "$place" "$build/bench/peers/zmq_server" \
        --bind "tcp://$host:*" --ready-file "$work/zmq.ready"
      server_pids+=("$bg_pid")
      address=$(head -n1 "$work/zmq.ready") ;;
    dask)
      rm -f "$work/dask.json"
      start_side dask_scheduler "" "$place" /usr/bin/python3 -m distributed.cli.dask_scheduler \
        --host "$host" --port 0 --no-dashboard --scheduler-file "$work/dask.json"
      server_pids+=("$bg_pid")
      wait_ready "$work/dask.json" "$bg_pid" "dask scheduler" 60
      # One worker process (no nanny: nothing between it and the scheduler)
      # with a thread per core, like ninfd's executables.
      start_side dask_worker "" "$place" /usr/bin/python3 -m distributed.cli.dask_worker \
        --scheduler-file "$work/dask.json" --nworkers 1 --nthreads "$cores" --no-nanny \
        --no-dashboard --host "$host"
      server_pids+=("$bg_pid")
      address=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["address"])' \
        "$work/dask.json") ;;
    *) echo "$0: unknown peer $peer" >&2; exit 2 ;;
  esac
}

stop_server() {
  local pid
  for pid in "${server_pids[@]}"; do bench_stop "$pid"; done
  # lib.sh's record of the loopback ninfd, stopped above.
  # shellcheck disable=SC2034
  daemon_pid=""
  server_pids=()
}

# ---- clients ----------------------------------------------------------------

client_command() {
  case $1 in
    ninf | ninf-fixed) echo "$build/bench/peers/ninf_client" ;;
    ninf-oneshot) echo "$build/bench/peers/ninf_client --oneshot" ;;
    grpc) echo "$build/bench/peers/grpc_client" ;;
    zeromq) echo "$build/bench/peers/zmq_client" ;;
    dask) echo "/usr/bin/python3 $peer_dir/dask_client.py" ;;
    raw) echo "$build/bench/peers/raw_tcp" ;;
  esac
}

# One client process on the client's side of PLACE, limited in time; its
# lines get place=PLACE in front. A failed client fails the run.
run_client() {
  local peer=$1 place=$2
  shift 2
  local cmd
  read -r -a cmd <<<"$(client_command "$peer")"
  local wrap=()
  [[ $place == host ]] || wrap=("$ninf_sites" exec "$sites_set" hub)
  if ! timeout --kill-after=5 "$limit" "${wrap[@]}" "${cmd[@]}" --connect "$address" "$@" \
    >"$work/client.out" 2>>"$work/client.log"; then
    echo "$0: $peer client failed on $place ($*); last lines of $work/client.log:" >&2
    tail -n 5 "$work/client.log" >&2
    exit 1
  fi
  sed "s/^/place=$place /" "$work/client.out" | tee -a "$raw" >&2
}

# K processes that start counting at the same wall-clock second; the sum of
# their calls over the window, per second.
run_rate() {
  local peer=$1 place=$2 k=$3 i pids=() cmd wrap=() margin start_at
  read -r -a cmd <<<"$(client_command "$peer")"
  [[ $place == host ]] || wrap=("$ninf_sites" exec "$sites_set" hub)
  # Time to start (and warm) every process before the window: Python and
  # Dask's client take about a second each on a loaded 2-core machine.
  if [[ $peer == dask ]]; then margin=$((4 + k)); else margin=$((2 + k / 4)); fi
  start_at=$(($(date +%s) + margin))
  for ((i = 0; i < k; i++)); do
    timeout --kill-after=5 "$limit" "${wrap[@]}" "${cmd[@]}" --connect "$address" \
      --workload rate --start-at "$start_at" --seconds "$seconds" \
      >"$work/rate.$i.out" 2>>"$work/client.log" &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[i]}" || { echo "$0: $peer rate client $i failed on $place" >&2; tail -n 5 "$work/client.log" >&2; exit 1; }
  done
  cat "$work"/rate.*.out | awk -v peer="$peer" -v place="$place" -v k="$k" -v s="$seconds" '
    { for (i = 1; i <= NF; i++) {
        if ($i ~ /^calls=/) { sub("calls=", "", $i); sum += $i; n++ }
        if ($i ~ /^late=1/) late++ } }
    END { if (n != k) exit 1
          printf "place=%s peer=%s workload=rate size=%d median=%.1f min=%.1f p90=%.1f reps=%d late=%d unit=calls/s\n",
            place, peer, k, sum / s, sum / s, sum / s, k, late }' >"$work/rate.line" ||
    { echo "$0: $peer $place: fewer than $k rate lines" >&2; exit 1; }
  tee -a "$raw" <"$work/rate.line" >&2
  # A process that missed the start of the window undercounts its peer.
  if grep -q ' late=[1-9]' "$work/rate.line"; then
    echo "peers.sh: warning: $peer $place $k clients: some started after the window opened" >&2
  fi
  rm -f "$work"/rate.*.out
}

run_peer() {
  local peer=$1 place=$2 s n k
  echo "peers.sh: $peer on $place" >&2
  start_server "$peer" "$place"
  if [[ $peer == ninf-fixed ]]; then  # the calls/s rows only
    for k in "${client_list[@]}"; do run_rate "$peer" "$place" "$k"; done
    stop_server
    return
  fi
  run_client "$peer" "$place" --workload null --reps "$null_reps" --warmup $((null_reps / 10 + 1))
  for s in "${size_list[@]}"; do
    run_client "$peer" "$place" --workload echo --size "$s" --reps "$reps" --warmup 1
  done
  for n in "${dgesv_list[@]}"; do
    run_client "$peer" "$place" --workload dgesv --size "$n" --reps "$reps" --warmup 1
  done
  for k in "${client_list[@]}"; do run_rate "$peer" "$place" "$k"; done
  stop_server
}

# The raw baseline of the round-trip rows on one host, in this run: over a
# Unix-domain socket pair, Ninf's same-host transport (raw_pingpong's echo
# side is its own forked child).
run_raw() {
  local max=0 s b wanted=""
  for s in "${size_list[@]}"; do
    b=$(numfmt --from=iec "$s")
    wanted+=" $b"
    ((b > max)) && max=$b
  done
  # raw_pingpong measures every power of 4 up to the largest; only the
  # sizes of this run's rows are kept.
  "$build/bench/raw_pingpong" --unix --max-size "$max" | awk -v wanted="$wanted " '
    $1 == "raw" || $1 == "raw_latency" {
      for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      w = $1 == "raw" ? "echo" : "null"; sz = $1 == "raw" ? f["size"] : 0
      if (w == "echo" && index(wanted, " " sz " ") == 0) next
      printf "place=host peer=raw workload=%s size=%s median=%s min=%s p90=%s reps=%s unit=us\n",
        w, sz, f["rtt_us"], f["rtt_us"], f["rtt_us"], f["iters"] }' | tee -a "$raw" >&2
}

# The same baseline across the veth pair: raw_tcp's server in the site and
# its client in the hub (raw_pingpong cannot be split in two).
run_raw_veth() {
  local host s
  echo "peers.sh: raw TCP on veth" >&2
  host=$(site_addr s1)
  start_side raw_tcp "$work/raw.ready" veth "$build/bench/peers/raw_tcp" --listen "$host" \
    --ready-file "$work/raw.ready"
  server_pids=("$bg_pid")
  address="$host:$(head -n1 "$work/raw.ready")"
  run_client raw veth --workload null --reps "$null_reps" --warmup $((null_reps / 10 + 1))
  for s in "${size_list[@]}"; do
    run_client raw veth --workload echo --size "$s" --reps "$reps" --warmup 1
  done
  stop_server
}

{
  echo "# cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1 | tr ' ' '_')"
  echo "# cores=$cores openblas_coretype=${OPENBLAS_CORETYPE:-default} quick=$quick"
  echo "# date=$(date -u +%Y-%m-%dT%H:%MZ) commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "# sizes=$sizes dgesv=$dgesv_sizes clients=$clients seconds=$seconds reps=$reps null_reps=$null_reps"
  echo "# raw=host: Unix-domain socket pair, veth: TCP_NODELAY; unpinned; before and after the peers, the lower median kept"
} >"$raw"
placements=(host)
if [[ $netns -eq 1 ]]; then
  sites_up peers --site s1:none:0
  placements+=(veth)
fi
for place in "${placements[@]}"; do
  if [[ $place == host ]]; then run_raw; else run_raw_veth; fi
  for peer in "${peer_list[@]}"; do run_peer "$peer" "$place"; done
  if [[ $place == host ]]; then run_raw; else run_raw_veth; fi
done

cp "$raw" "$raw_log"
/usr/bin/python3 "$peer_dir/report.py" "$raw_log" --out "$out"
echo "peers.sh: wrote $out, ${out%.md}.png and $raw_log" >&2
