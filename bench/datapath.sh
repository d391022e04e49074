#!/usr/bin/env bash
# bench/datapath.sh - the data path of issue 8: one-shot calls on reused,
# warm and cold executables, and arrays over loopback TCP, ninfd's
# Unix-domain socket and shared memory, against the raw TCP ping-pong of the
# same run; written up as bench/results/datapath.md.
#
#   bench/datapath.sh BUILD_DIR [--out FILE] [--max-size SIZE (default 256M)]
#
# BUILD_DIR is an already built tree. Every line of the raw log (FILE with
# .raw.txt) is a program's own output prefixed with the configuration it ran
# under; `bench/report.py datapath` turns the log into the tables.
set -euo pipefail

usage() {
  echo "usage: $0 BUILD_DIR [--out FILE] [--max-size SIZE]" >&2
  exit 2
}
[[ $# -ge 1 ]] || usage
build=$(cd "$1" && pwd) || usage
shift
here=$(cd "$(dirname "$0")" && pwd)
out="$here/results/datapath.md"
max_size=256M
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) [[ $# -ge 2 ]] || usage; out=$2; shift 2 ;;
    --max-size) [[ $# -ge 2 ]] || usage; max_size=$2; shift 2 ;;
    *) usage ;;
  esac
done
cores=$(nproc)
export OPENBLAS_NUM_THREADS=$cores
raw_log="${out%.md}.raw.txt"
work=$(mktemp -d)
# Daemon start and stop, and the cleanup on exit (bench/lib.sh).
source "$here/lib.sh"
trap bench_cleanup EXIT

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
      run "$1_tcp" $(tcp) -- "$build/bench/bench_throughput" --threads $threads --size $size
      run "$1_auto" "NINF_SERVER=unix:$(unix_path)" -- \
        "$build/bench/bench_throughput" --threads $threads --size $size
    done
  done
}
tcp() { echo "NINF_SERVER=127.0.0.1:$port" NINF_TRANSPORT=tcp; }
unix_path() { echo "/tmp/ninfd-$port.sock"; }

run raw -- "$build/bench/raw_pingpong" --max-size "$max_size"
run raw_uds -- "$build/bench/raw_pingpong" --unix --max-size "$max_size"

# One-shot calls, executables reused (the default).
start_daemon --
run reused $(tcp) -- "$build/bench/bench_latency" --registry "$build/stubs/registry"
run tcp $(tcp) -- "$build/bench/bench_transfer" --max-size "$max_size"
run shm "NINF_SERVER=unix:$(unix_path)" NINF_TRANSPORT=auto -- \
  "$build/bench/bench_transfer" --max-size "$max_size"
run uds "NINF_SERVER=unix:$(unix_path)" NINF_TRANSPORT=socket -- \
  "$build/bench/bench_transfer" --max-size "$max_size"
run reused_uds "NINF_SERVER=unix:$(unix_path)" -- "$build/bench/bench_latency" \
  --registry "$build/stubs/registry"
throughput reused
stop_daemon

# One process per call, started in advance (the behaviour before reuse).
start_daemon -- --executable-max-calls 1
run warm $(tcp) -- "$build/bench/bench_latency" --registry "$build/stubs/registry"
run warm_tcp $(tcp) -- "$build/bench/bench_transfer" --max-size 16M
throughput warm
stop_daemon

# Every call starts its executable: the cold start.
start_daemon -- --executable-max-calls 1 --warm-executables 0
run cold $(tcp) -- "$build/bench/bench_latency" --registry "$build/stubs/registry"
stop_daemon

# dgesv with one slot (the remote solve gets every core, as the local one).
start_daemon -- --slots 1
run dgesv_tcp $(tcp) -- "$build/bench/bench_dgesv" 1000 2000 4000
run dgesv_shm "NINF_SERVER=unix:$(unix_path)" -- "$build/bench/bench_dgesv" 1000 2000 4000
stop_daemon

/usr/bin/python3 "$here/report.py" datapath "$raw_log" "$(date -u '+%Y-%m-%d %H:%M UTC')" >"$out"
echo "datapath.sh: wrote $out (raw log $raw_log)" >&2
