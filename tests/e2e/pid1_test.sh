#!/usr/bin/env bash
# ninfd as PID 1 of its own PID namespace, as the entrypoint of a container
# is: its executables see getppid() == 1 from the start, which must not be
# mistaken for "ninfd is gone". Runs a real remote ep call against it.
#
#   pid1_test.sh NINFD REGISTRY EP_DEMO
set -euo pipefail
ninfd=$1 registry=$2 ep_demo=$3
work=$(mktemp -d)
ns_pid=""
cleanup() {
  # unshare --fork waits for ninfd (PID 1 inside); when PID 1 exits the
  # kernel kills the rest of the namespace, so no executable outlives it.
  if [[ -n "$ns_pid" ]] && kill -0 "$ns_pid" 2>/dev/null; then
    pkill -TERM -P "$ns_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$ns_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$ns_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

unshare --pid --fork --mount-proc \
  "$ninfd" --port 0 --ready-file "$work/ready" --registry "$registry" --log-level warn \
  2>"$work/ninfd.log" &
ns_pid=$!
for _ in $(seq 100); do
  [[ -s "$work/ready" ]] && break
  kill -0 "$ns_pid" 2>/dev/null || { cat "$work/ninfd.log" >&2; exit 1; }
  sleep 0.1
done
[[ -s "$work/ready" ]] || { echo "pid1_test: ninfd did not become ready" >&2; exit 1; }
inside_pid=$(pgrep -P "$ns_pid" -x ninfd || true)
echo "pid1_test: ninfd runs as PID 1 of a new PID namespace (host pid ${inside_pid:-?})"
grep -q '^NSpid:.*[[:space:]]1$' "/proc/$inside_pid/status" ||
  { echo "pid1_test: ninfd is not PID 1 in its namespace" >&2; exit 1; }

port=$(head -n1 "$work/ready")
# m = 20: a second's fraction of EP; two calls, so a warm executable is used too.
for call in 1 2; do
  if ! NINF_SERVER="127.0.0.1:$port" timeout 60 "$ep_demo" 20 >"$work/ep.out" 2>&1; then
    cat "$work/ep.out" "$work/ninfd.log" >&2
    echo "pid1_test: call $call failed with ninfd as PID 1" >&2
    exit 1
  fi
done
grep -i "remote" "$work/ep.out" | head -n 2
echo "pid1_test: ok"
