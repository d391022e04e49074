#!/usr/bin/env bash
# bench/relay.sh - what the relay costs bulk arrays (docs/relay.md): one-shot
# `echo` of 1 MiB ... 256 MiB through ninf-relay to a reverse ninfd, against
# the same calls straight to a direct ninfd over TCP, alternated round by
# round in one session so that both see the same machine.
#
#   bash bench/relay.sh BUILD_DIR [--out FILE] [--quick] [--rounds N]
#       [--max-size SIZE] [--relay-cpus CPUS] [--tls 0|1]
#
# Everything on loopback over TCP (NINF_TRANSPORT=tcp), both ninfds with a
# key (clients authenticate to ninfd through the bridge). Placement: both
# ninfds and their executables on CPU 0, the client on CPU 1, the relay on
# --relay-cpus (taskset; default either CPU; this machine has 2 vCPUs). Writes FILE and its raw log
# FILE.raw.txt. Target (issue 29): relayed bulk >= 0.80 of direct. With --tls 1
# both ninfds have a certificate of a site CA (scripts/site_ca.sh) and the
# clients verify it: the direct calls are TLS, the relayed ones the client's
# TLS session with the reverse ninfd through the relay (issue 43: relayed TLS
# >= 0.80 of direct TLS from 16 MiB).
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_declare relay "Relayed (ninf-relay, splice) vs direct one-shot echo over TCP."
bench_option --rounds N rounds 3 1 "rounds of direct and relayed runs"
bench_option --max-size SIZE max_size 256M 4M "the largest one-shot echo"
bench_option --relay-cpus CPUS relay_cpus 0-1 "" "where ninf-relay runs (taskset -c; 0-1: either CPU)"
bench_option --tls 0/1 tls 0 "" "TLS on both ninfds, the clients verifying the site CA"
bench_parse "$@"
bench_need server/ninfd relay/ninf-relay bench/bench_transfer stubs/registry/null stubs/registry/echo
raw=$raw_log
: >"$raw"

head -c 32 /dev/urandom | od -An -tx1 | tr -d " \n" >"$work/key"
head -c 32 /dev/urandom | od -An -tx1 | tr -d " \n" >"$work/relay.key"
chmod 600 "$work/key" "$work/relay.key"
tls_flags=() tls_env=()
if [[ $tls == 1 ]]; then
  bash "$here/../scripts/site_ca.sh" "$work/pki" ca >&2
  # The relayed client verifies the reverse ninfd for its relay name.
  bash "$here/../scripts/site_ca.sh" "$work/pki" server server 127.0.0.1 bench >&2
  tls_flags=(--tls-cert "$work/pki/server.pem" --tls-key "$work/pki/server.key")
  tls_env=(NINF_TLS_CA="$work/pki/ca.pem")
fi

start_daemon 0 -- --key-file "$work/key" "${tls_flags[@]}"
direct_port=$port
start_bg ninf-relay "$work/relay.ready" "$work/relay.log" \
  taskset -c "$relay_cpus" "$build/relay/ninf-relay" --port 0 --key-file "$work/relay.key" \
  --ready-file "$work/relay.ready" --log-level warn
relay_port=$(cat "$work/relay.ready")
start_bg "reverse ninfd" "" "$work/reverse.log" \
  taskset -c 0 "$build/server/ninfd" --reverse --relay "127.0.0.1:$relay_port" \
  --relay-name bench --relay-key-file "$work/relay.key" --key-file "$work/key" \
  --registry "$build/stubs/registry" --log-level info "${tls_flags[@]}"
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
  env "${tls_env[@]}" NINF_SERVER=$server NINF_KEY_FILE="$work/key" NINF_TRANSPORT=tcp \
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
[[ $tls != 1 ]] || printf '\nWith TLS (--tls 1): both ninfds show a certificate of a site CA and the clients verify it; relayed calls are the client'"'"'s TLS session with the reverse ninfd, through the relay.\n' >>"$out"
cat "$out"
