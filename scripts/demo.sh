#!/usr/bin/env bash
# The main job: build, start a local ninfd on loopback serving the standard
# library, solve a random 2000x2000 system with remote dgesv next to the same
# solve done locally, then stop the daemon.
#   usage: scripts/demo.sh [n]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
BUILD=${NINF_BUILD:-build}
N=${1:-2000}

work=$(mktemp -d)
ninfd_pid=""
cleanup() {
  if [ -n "$ninfd_pid" ] && kill -0 "$ninfd_pid" 2>/dev/null; then
    kill -TERM "$ninfd_pid"
    wait "$ninfd_pid" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# One job slot: the remote solve gets every core, as the local one does.
# dgesv's executable starts with ninfd (warm_at_start), not inside the first
# call (bench/first_call.sh measures both).
"$BUILD/server/ninfd" --port 0 --listen 127.0.0.1 --slots 1 --warm-at-start dgesv \
  --ready-file "$work/port" \
  2> "$work/ninfd.log" &
ninfd_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { echo "ninfd did not start:"; cat "$work/ninfd.log"; exit 1; }
port=$(cat "$work/port")
echo "ninfd serving $(ls "$BUILD/stubs/registry" | grep -c '\.interface$') functions on 127.0.0.1:$port"

# The remote solve runs the OpenBLAS kernels ninfd gives its executables
# (on a CPU the library does not know, better ones than it would pick:
# docs/server.md); the local solve gets the same, so that the ratio
# compares a call with a local solve, not two kernels.
if core=$("$BUILD/server/ninfd" --openblas-core); then
  export OPENBLAS_CORETYPE=$core
  echo "OpenBLAS kernels, remote and local: $core"
fi
NINF_SERVER=127.0.0.1:$port "$BUILD/examples/c/linpack_demo" "$N"
echo
"$BUILD/server/ninfd" --status --server "127.0.0.1:$port" | grep -E '^(completed|failed|bytes_in|bytes_out|function\.dgesv)'
