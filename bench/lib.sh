# bench/lib.sh - what the benchmark scripts share: a ninfd of their own,
# started and stopped by pid, and one cleanup path. Sourced; the caller sets
# `build` (a built tree) and `work` (a temporary folder) first.
#
#   start_daemon [taskset CPUS] -- [ninfd arguments]
#       a fresh ninfd on a free loopback port, pinned when CPUS is given;
#       sets daemon_pid and port and exports NINF_SERVER=127.0.0.1:PORT;
#       its log ($work/ninfd.log) at BENCH_LOG_LEVEL (default warn; info
#       logs every call with its recv/compute/send seconds)
#   stop_daemon
#   trap bench_cleanup EXIT   (stops the daemon, removes $work)

daemon_pid=""

bench_cleanup() {
  stop_daemon
  rm -rf "$work"
}

start_daemon() {
  local pin=()
  if [[ "$1" != "--" ]]; then pin=(taskset -c "$1"); shift; fi
  shift
  rm -f "$work/ready"
  "${pin[@]}" "$build/server/ninfd" --port 0 --ready-file "$work/ready" \
    --registry "$build/stubs/registry" --log-level "${BENCH_LOG_LEVEL:-warn}" "$@" 2>>"$work/ninfd.log" &
  daemon_pid=$!
  for _ in $(seq 100); do
    [[ -s "$work/ready" ]] && break
    kill -0 "$daemon_pid" 2>/dev/null || { cat "$work/ninfd.log" >&2; exit 1; }
    sleep 0.1
  done
  [[ -s "$work/ready" ]] || { echo "$0: ninfd did not become ready" >&2; exit 1; }
  port=$(head -n1 "$work/ready")
  export NINF_SERVER="127.0.0.1:$port"
  echo "$0: ninfd pid $daemon_pid on $NINF_SERVER ${pin[*]} $*" >&2
}

# Safe to call when none runs.
stop_daemon() {
  if [[ -n "$daemon_pid" ]] && kill -0 "$daemon_pid" 2>/dev/null; then
    kill -TERM "$daemon_pid"
    wait "$daemon_pid" 2>/dev/null || true
  fi
  daemon_pid=""
}

# Emulated sites (network namespaces): the scripts that make them share these.
#   remove_namespaces NS...   kills what runs in them, then deletes them (and
#                             their veths: `ip netns del` alone kills nothing)
#   wait_file FILE            until FILE has content (10 s), else shows the
#                             logs in $work and exits
remove_namespaces() {
  local ns pids=()
  for ns in "$@"; do
    [[ -e "/run/netns/$ns" ]] && mapfile -t -O "${#pids[@]}" pids < <(ip netns pids "$ns")
  done
  if [[ ${#pids[@]} -gt 0 ]]; then
    kill -TERM "${pids[@]}" 2>/dev/null || true
    sleep 1
    kill -KILL "${pids[@]}" 2>/dev/null || true
  fi
  wait 2>/dev/null || true
  for ns in "$@"; do
    [[ -e "/run/netns/$ns" ]] && ip netns del "$ns"
  done
  return 0
}

wait_file() {
  for _ in $(seq 100); do
    [[ -s "$1" ]] && return 0
    sleep 0.1
  done
  echo "$0: $1 never appeared; logs:" >&2
  tail -n 5 "$work"/*.log >&2
  exit 1
}
