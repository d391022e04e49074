#!/usr/bin/env bash
# bench/auth.sh - what authentication costs (docs/security.md): a one-shot
# `null` call (connection, handshake, executable start) and one-shot `echo`
# transfers, each against a ninfd without a key and one with a key_file,
# alternated A B A B ... in one session so that both see the same machine.
#
#   bench/auth.sh BUILD_DIR [--out FILE] [--rounds N] [--max-size SIZE]
#
# Writes FILE (default bench/results/auth.md) and its raw log FILE.raw.txt.
# Targets (issue 7): <= 5% on one-shot null, nothing measurable on bulk.
set -euo pipefail

usage() {
  echo "usage: $0 BUILD_DIR [--out FILE] [--rounds N] [--max-size SIZE]" >&2
  exit 2
}
[[ $# -ge 1 ]] || usage
build=$(cd "$1" && pwd) || usage
shift
here=$(cd "$(dirname "$0")" && pwd)
out="$here/results/auth.md"
rounds=5
max_size=16M
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) [[ $# -ge 2 ]] || usage; out=$2; shift 2 ;;
    --rounds) [[ $# -ge 2 ]] || usage; rounds=$2; shift 2 ;;
    --max-size) [[ $# -ge 2 ]] || usage; max_size=$2; shift 2 ;;
    *) usage ;;
  esac
done
for prog in server/ninfd bench/bench_latency bench/bench_transfer bench/bench_handshake stubs/registry/null stubs/registry/echo; do
  [[ -x "$build/$prog" ]] || { echo "auth.sh: $build/$prog is missing: build first" >&2; exit 1; }
done

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
raw="${out%.md}.raw.txt"
: >"$raw"

# start NAME [ninfd arguments]: a fresh ninfd; sets `port` to its port.
start() {
  local name=$1
  shift
  "$build/server/ninfd" --port 0 --ready-file "$work/$name.ready" \
    --registry "$build/stubs/registry" --log-level warn "$@" >/dev/null 2>>"$work/ninfd.log" &
  pids+=($!)
  for _ in $(seq 100); do
    [[ -s "$work/$name.ready" ]] && break
    sleep 0.1
  done
  [[ -s "$work/$name.ready" ]] || { cat "$work/ninfd.log" >&2; exit 1; }
  port=$(head -n1 "$work/$name.ready")
}

head -c 32 /dev/urandom | od -An -tx1 | tr -d " \n" >"$work/key"
chmod 600 "$work/key"
start plain
plain_port=$port
start keyed --key-file "$work/key"
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
