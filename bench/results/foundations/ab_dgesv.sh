#!/usr/bin/env bash
# A/B of remote dgesv at n = 1000 (ratio to local LAPACKE_dgesv) between two
# built trees, alternating so that a drift of the machine hits both alike.
#   ab_dgesv.sh BUILD_BEFORE BUILD_AFTER [ROUNDS]
set -euo pipefail
before=$1 after=$2 rounds=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for _ in $(seq "$rounds"); do
  for b in "$before" "$after"; do
    rm -f "$work/ready"
    "$b/server/ninfd" --port 0 --ready-file "$work/ready" --registry "$b/stubs/registry" \
      --slots 1 --log-level warn 2>/dev/null &
    pid=$!
    for _ in $(seq 50); do [[ -s "$work/ready" ]] && break; sleep 0.1; done
    NINF_SERVER="127.0.0.1:$(head -n1 "$work/ready")" OPENBLAS_NUM_THREADS=$(nproc) \
      "$b/bench/bench_dgesv" --runs 5 1000 | sed "s|^|$b |"
    kill -TERM "$pid"
    wait "$pid" || true
  done
done
