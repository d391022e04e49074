#!/usr/bin/env bash
# bench/tls.sh - what TLS costs calls over TCP (docs/security.md): one-shot
# and handle `null`, one-shot `echo` 1 KiB ... SIZE and remote dgesv, each
# against three ninfds run side by side — plaintext, TLS, mutual TLS — and
# one-shot `null` with and without session resumption, alternated mode by
# mode in every round so that all see the same machine.
#
#   bash bench/tls.sh BUILD_DIR [--out FILE] [--quick] [--rounds N]
#       [--max-size SIZE] [--dgesv N]
#
# Every client uses TCP (NINF_TRANSPORT=tcp: the same-host Unix socket would
# stay plaintext). Daemons run on CPU 1 and clients on CPU 0 (the "cross"
# placement of bench/run.sh), so encryption on one side and decryption on
# the other overlap as they would between two hosts.
# Writes FILE and its raw log FILE.raw.txt.
# Targets (issue 29): TLS `echo` >= 0.80 of plaintext from 1 MiB up; one-shot
# `null` with resumption <= 1.5x plaintext.
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_declare tls "What TLS costs calls over TCP: plaintext, TLS and mutual TLS ninfds alternated."
bench_option --rounds N rounds 3 1 "rounds of all modes"
bench_option --max-size SIZE max_size 256M 4M "the largest one-shot echo"
bench_option --dgesv N dgesv_n 2000 500 "the order of the remote dgesv"
bench_parse "$@"
bench_need server/ninfd bench/bench_latency bench/bench_transfer bench/bench_handle \
  bench/bench_dgesv stubs/registry/null stubs/registry/echo stubs/registry/dgesv
raw=$raw_log
: >"$raw"

pki=$work/pki
bash "$here/../scripts/site_ca.sh" "$pki" ca
bash "$here/../scripts/site_ca.sh" "$pki" server server 127.0.0.1
bash "$here/../scripts/site_ca.sh" "$pki" client client "/O=ninf site/CN=bench"

export NINF_TRANSPORT=tcp
start_daemon 1 --
plain_port=$port
start_daemon 1 -- --tls-cert "$pki/server.pem" --tls-key "$pki/server.key"
tls_port=$port
start_daemon 1 -- --tls-cert "$pki/server.pem" --tls-key "$pki/server.key" --tls-client-ca "$pki/ca.pem"
mtls_port=$port

# run MODE PROGRAM ARGS...: one run pinned to CPU 0 against the daemon of MODE
# (plain, tls, tls-full: TLS without resumption, mtls), its output appended
# to the raw log with the mode in front.
run() {
  local mode=$1 port tls=()
  shift
  case $mode in
    plain) port=$plain_port ;;
    tls) port=$tls_port tls=(NINF_TLS_CA="$pki/ca.pem") ;;
    tls-full) port=$tls_port tls=(NINF_TLS_CA="$pki/ca.pem" NINF_TLS_RESUME=0) ;;
    mtls) port=$mtls_port
      tls=(NINF_TLS_CA="$pki/ca.pem" NINF_TLS_CERT="$pki/client.pem" NINF_TLS_KEY="$pki/client.key") ;;
  esac
  env "${tls[@]}" NINF_SERVER="127.0.0.1:$port" taskset -c 0 "$@" | sed "s/^/$mode /" | tee -a "$raw"
}

iters=200
[[ $quick -eq 1 ]] && iters=40
for r in $(seq "$rounds"); do
  for mode in plain tls tls-full mtls; do
    run "$mode" "$build/bench/bench_latency" --iters "$iters"
  done
  for mode in plain tls mtls; do
    run "$mode" "$build/bench/bench_handle" --placement cross --max-size 1M --iters "$iters"
    run "$mode" "$build/bench/bench_transfer" --max-size "$max_size" --max-iters 10
    run "$mode" "$build/bench/bench_dgesv" --runs 3 "$dgesv_n"
  done
  echo "tls.sh: round $r of $rounds done" >&2
done

/usr/bin/python3 "$here/report.py" tls "$raw" "$rounds" >"$out"
cat "$out"
