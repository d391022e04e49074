#!/usr/bin/env bash
# bench/auth.sh - what authentication costs (docs/security.md): a one-shot
# `null` call (connection, handshake, executable start) and one-shot `echo`
# transfers, each against a ninfd without a key and one with a key_file,
# alternated A B A B ... in one session so that both see the same machine.
#
#   bash bench/auth.sh BUILD_DIR [--out FILE] [--quick] [--rounds N]
#       [--max-size SIZE]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file, and the default is a
# new bench/results/auth-DATE.md.)
#
# Writes FILE and its raw log FILE.raw.txt.
# Targets (issue 7): <= 5% on one-shot null, nothing measurable on bulk.
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_declare auth "What a key costs one-shot calls: a ninfd without a key and one with, alternated."
bench_option --rounds N rounds 5 1 "rounds of plain and keyed runs"
bench_option --max-size SIZE max_size 16M 1M "the largest one-shot echo"
bench_parse "$@"
bench_need server/ninfd bench/bench_latency bench/bench_transfer bench/bench_handshake \
  stubs/registry/null stubs/registry/echo
raw=$raw_log
: >"$raw"

head -c 32 /dev/urandom | od -An -tx1 | tr -d " \n" >"$work/key"
chmod 600 "$work/key"
start_daemon --
plain_port=$port
start_daemon -- --key-file "$work/key"
keyed_port=$port

# run MODE PROGRAM ARGS...: one run against the daemon of MODE (plain or
# keyed), its output appended to the raw log with the mode in front.
run() {
  local mode=$1
  shift
  local port=$plain_port key=()
  if [[ $mode == keyed ]]; then port=$keyed_port; key=(NINF_KEY_FILE="$work/key"); fi
  env "${key[@]}" NINF_SERVER="127.0.0.1:$port" "$@" | sed "s/^/$mode /" | tee -a "$raw"
}

for r in $(seq "$rounds"); do
  for mode in plain keyed; do
    run "$mode" "$build/bench/bench_latency" --iters 200
    run "$mode" "$build/bench/bench_transfer" --max-size "$max_size" --max-iters 20
  done
  # The handshake alone: connections to both daemons alternated call by call.
  "$build/bench/bench_handshake" "$plain_port" "$keyed_port" "$work/key" 1000 |
    sed "s/^/both /" | tee -a "$raw"
  echo "auth.sh: round $r of $rounds done" >&2
done

/usr/bin/python3 "$here/report.py" auth "$raw" "$rounds" >"$out"
cat "$out"
