#!/usr/bin/env bash
# bench/datapath.sh - the data path of issue 8: one-shot calls on reused,
# warm and cold executables, and arrays over loopback TCP, ninfd's
# Unix-domain socket and shared memory, against the raw TCP ping-pong of the
# same run; written up as bench/results/datapath-DATE.md.
#
#   bash bench/datapath.sh BUILD_DIR [--out FILE] [--quick] [--max-size SIZE]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file, and the default is a
# new bench/results/datapath-DATE.md.)
#
# BUILD_DIR is an already built tree. Every line of the raw log (FILE with
# .raw.txt) is a program's own output prefixed with the configuration it ran
# under; `bench/report.py datapath` turns the log into the tables.
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_declare datapath "Issue 8's data path: reused, warm and cold executables; TCP, Unix socket, shared memory."
bench_option --max-size SIZE max_size 256M 1M "the largest transfer"
bench_parse "$@"
bench_need server/ninfd bench/raw_pingpong bench/bench_latency bench/bench_transfer \
  bench/bench_throughput bench/bench_dgesv stubs/registry/null stubs/registry/echo stubs/registry/dgesv
# --quick: one dgesv size, 1 s of throughput per point, small one-process-per-call transfers.
if [[ $quick -eq 1 ]]; then
  dgesv_sizes=(1000) throughput_args=(--seconds 1) warm_max_size=$max_size
else
  dgesv_sizes=(1000 2000 4000) throughput_args=() warm_max_size=16M
fi
cores=$(nproc)
export OPENBLAS_NUM_THREADS=$cores

# run LABEL ENV... -- PROGRAM ARGS...: the program's lines, each prefixed.
run() {
  local label=$1 envs=()
  shift
  while [[ "$1" != "--" ]]; do envs+=("$1"); shift; done
  shift
  echo "datapath.sh: $label: ${envs[*]} $*" >&2
  env "${envs[@]}" "$@" | sed "s/^/$label /" | tee -a "$raw_log"
}

: >"$raw_log"
# throughput LABEL: one-shot calls/s from 1 and 16 client threads, null and
# 1 MiB echo, over TCP and over the same-host path (LABEL_tcp, LABEL_auto).
throughput() {
  local threads size
  for threads in 1 16; do
    for size in 0 1M; do
      run "$1_tcp" "${tcp[@]}" -- "$build/bench/bench_throughput" --threads $threads --size $size \
        "${throughput_args[@]}"
      run "$1_auto" "NINF_SERVER=unix:$(unix_path)" -- \
        "$build/bench/bench_throughput" --threads $threads --size $size "${throughput_args[@]}"
    done
  done
}
# start [ninfd arguments]: start_daemon, and `tcp`, the environment that
# pins a client to it over loopback TCP.
start() {
  start_daemon -- "$@"
  tcp=("NINF_SERVER=127.0.0.1:$port" NINF_TRANSPORT=tcp)
}
unix_path() { echo "/tmp/ninfd-$port.sock"; }

run raw -- "$build/bench/raw_pingpong" --max-size "$max_size"
run raw_uds -- "$build/bench/raw_pingpong" --unix --max-size "$max_size"

# One-shot calls, executables reused (the default).
start
run reused "${tcp[@]}" -- "$build/bench/bench_latency" --registry "$build/stubs/registry"
run tcp "${tcp[@]}" -- "$build/bench/bench_transfer" --max-size "$max_size"
run shm "NINF_SERVER=unix:$(unix_path)" NINF_TRANSPORT=auto -- \
  "$build/bench/bench_transfer" --max-size "$max_size"
run uds "NINF_SERVER=unix:$(unix_path)" NINF_TRANSPORT=socket -- \
  "$build/bench/bench_transfer" --max-size "$max_size"
run reused_uds "NINF_SERVER=unix:$(unix_path)" -- "$build/bench/bench_latency" \
  --registry "$build/stubs/registry"
throughput reused
stop_daemon

# One process per call, started in advance (the behaviour before reuse).
start --executable-max-calls 1
run warm "${tcp[@]}" -- "$build/bench/bench_latency" --registry "$build/stubs/registry"
run warm_tcp "${tcp[@]}" -- "$build/bench/bench_transfer" --max-size "$warm_max_size"
throughput warm
stop_daemon

# Every call starts its executable: the cold start.
start --executable-max-calls 1 --warm-executables 0
run cold "${tcp[@]}" -- "$build/bench/bench_latency" --registry "$build/stubs/registry"
stop_daemon

# dgesv with one slot (the remote solve gets every core, as the local one).
start --slots 1
run dgesv_tcp "${tcp[@]}" -- "$build/bench/bench_dgesv" "${dgesv_sizes[@]}"
run dgesv_shm "NINF_SERVER=unix:$(unix_path)" -- "$build/bench/bench_dgesv" "${dgesv_sizes[@]}"
stop_daemon

/usr/bin/python3 "$here/report.py" datapath "$raw_log" "$(date -u '+%Y-%m-%d %H:%M UTC')" >"$out"
echo "datapath.sh: wrote $out (raw log $raw_log)" >&2
