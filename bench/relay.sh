#!/usr/bin/env bash
# bench/relay.sh - what the relay costs bulk arrays (docs/relay.md): one-shot
# `echo` of 1 MiB ... 256 MiB through ninf-relay to a reverse ninfd, against
# the same calls straight to a direct ninfd over TCP, alternated round by
# round in one session so that both see the same machine.
#
#   bash bench/relay.sh BUILD_DIR [--out FILE] [--quick] [--rounds N]
#       [--max-size SIZE]
#
# Everything on loopback over TCP (NINF_TRANSPORT=tcp), both ninfds with a
# key (clients authenticate to ninfd through the bridge). Placement: both
# ninfds and their executables on CPU 0, the client on CPU 1, the relay on
# --relay-cpus (taskset; default either CPU; this machine has 2 vCPUs). Writes FILE and its raw log
# FILE.raw.txt. Target (issue 29): relayed bulk >= 0.80 of direct.
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_declare relay "Relayed (ninf-relay, splice) vs direct one-shot echo over TCP."
bench_option --rounds N rounds 3 1 "rounds of direct and relayed runs"
bench_option --max-size SIZE max_size 256M 4M "the largest one-shot echo"
bench_option --relay-cpus CPUS relay_cpus 0-1 "" "where ninf-relay runs (taskset -c; 0-1: either CPU)"
bench_parse "$@"
bench_need server/ninfd relay/ninf-relay bench/bench_transfer stubs/registry/null stubs/registry/echo
raw=$raw_log
: >"$raw"

head -c 32 /dev/urandom | od -An -tx1 | tr -d " \n" >"$work/key"
head -c 32 /dev/urandom | od -An -tx1 | tr -d " \n" >"$work/relay.key"
chmod 600 "$work/key" "$work/relay.key"

start_daemon 0 -- --key-file "$work/key"
direct_port=$port
start_bg ninf-relay "$work/relay.ready" "$work/relay.log" \
  taskset -c "$relay_cpus" "$build/relay/ninf-relay" --port 0 --key-file "$work/relay.key" \
  --ready-file "$work/relay.ready" --log-level warn
relay_port=$(cat "$work/relay.ready")
start_bg "reverse ninfd" "" "$work/reverse.log" \
  taskset -c 0 "$build/server/ninfd" --reverse --relay "127.0.0.1:$relay_port" \
  --relay-name bench --relay-key-file "$work/relay.key" --key-file "$work/key" \
  --registry "$build/stubs/registry" --log-level info
for _ in $(seq 200); do
  grep -q 'event=relay_state state=registered' "$work/reverse.log" && break
  sleep 0.05
done
grep -q 'event=relay_state state=registered' "$work/reverse.log" ||
  { echo "relay.sh: the reverse ninfd did not register" >&2; exit 1; }

# run MODE: one bench_transfer run against MODE's server, into the raw log.
run() {
  local server
  if [[ $1 == direct ]]; then server="127.0.0.1:$direct_port"; else server="bench@127.0.0.1:$relay_port"; fi
  NINF_SERVER=$server NINF_KEY_FILE="$work/key" NINF_TRANSPORT=tcp \
    taskset -c 1 "$build/bench/bench_transfer" --max-size "$max_size" --max-iters 5 |
    grep -E "^transfer size=(1048576|4194304|16777216|67108864|268435456) " |
    sed "s/^/$1 /" | tee -a "$raw"
}
for r in $(seq "$rounds"); do
  for mode in direct relayed; do run "$mode"; done
  echo "relay.sh: round $r of $rounds done" >&2
done

/usr/bin/python3 "$here/report.py" relay "$raw" "$rounds" "$(nproc)" "$(uname -r)" \
  "$relay_cpus" >"$out"
cat "$out"
