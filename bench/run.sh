#!/usr/bin/env bash
# bench/run.sh - the core benchmark: raw TCP baseline, array transfer, call
# latency and remote dgesv, all measured in one session against a ninfd
# started here, written up as bench/results/core-DATE.md (or --out FILE,
# never over an existing file).
#
#   bash bench/run.sh BUILD_DIR [--out FILE] [--quick] [--max-size SIZE]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file, and the default is a
# new bench/results/core-DATE.md.)
#
# BUILD_DIR is an already built tree (this script builds nothing). The
# daemon is BUILD_DIR/server/ninfd: with default settings for the one-shot
# transfer and latency programs, with --slots 1 for dgesv (so the one running
# call gets every core, as the local runs do), pinned per placement for the
# handle programs. OPENBLAS_NUM_THREADS is the core count for all of them. The raw
# log of every program lands next to the report (FILE with .raw.txt).
# --max-size caps the transfer sizes (default 256M); --quick is a smoke run
# (16M, fewer loops, dgesv n = 1000 only) whose numbers mean little.
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_declare core "The core benchmark: raw TCP, array transfer, call latency, remote dgesv, handles."
bench_option --max-size SIZE max_size 256M 16M "the largest transfer"
bench_parse "$@"
bench_need server/ninfd bench/raw_pingpong bench/bench_transfer bench/bench_latency \
  bench/bench_handle bench/bench_dgesv stubs/registry/null stubs/registry/echo stubs/registry/dgesv

cores=$(nproc)
export OPENBLAS_NUM_THREADS=$cores
# The core table compares with raw loopback TCP: calls stay on TCP (the
# same-host path, which a client takes by itself once it has seen ninfd on
# loopback, is measured by bench/datapath.sh).
export NINF_TRANSPORT=tcp
if [[ $quick -eq 1 ]]; then
  transfer_args=(--max-size "$max_size" --max-iters 50)
  latency_args=(--iters 50)
  dgesv_args=(--runs 1 1000)
else
  transfer_args=(--max-size "$max_size")
  latency_args=()
  dgesv_args=()
fi

# The raw baseline right before the calls it is compared with.
: >"$raw_log"
run() {
  echo "run.sh: $*" >&2
  "$@" | tee -a "$raw_log"
}
# One-shot calls against a daemon with default settings (a slot per core).
start_daemon --
run "$build/bench/raw_pingpong" --max-size "$max_size"
run "$build/bench/bench_transfer" "${transfer_args[@]}"
run "$build/bench/bench_latency" --registry "$build/stubs/registry" "${latency_args[@]}"
stop_daemon

# dgesv with one slot, so the remote solve gets every core as the local one does.
start_daemon -- --slots 1
run "$build/bench/bench_dgesv" "${dgesv_args[@]}"
stop_daemon

# Function handles, once per CPU placement: a daemon pinned like the raw
# ping-pong's echo child, the client (bench_handle) on CPU 0.
if [[ $cores -ge 2 ]]; then placements="same:0 cross:1"; else placements="same:0"; fi
for placement in $placements; do
  start_daemon "${placement#*:}" --
  run "$build/bench/bench_handle" --placement "${placement%%:*}" --max-size "$max_size" "${latency_args[@]}"
  stop_daemon
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
/usr/bin/python3 "$here/report.py" core "$raw_log" "$cpu" "$cores" "$(date -u '+%Y-%m-%d %H:%M UTC')" \
  "$(uname -r)" "$quick" >"$out"
echo "run.sh: wrote $out (raw log $raw_log)" >&2
