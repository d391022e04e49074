#!/usr/bin/env bash
# Starts and stops a private single-node Slurm cluster (munged, slurmctld,
# slurmd) for the tests that need Slurm. See tests/slurm/README.md.
#
#   eval "$(bash tests/slurm/slurm.sh start)"   # exit 77: cannot run here
#   srun -n 1 hostname
#   bash tests/slurm/slurm.sh stop
#
# Commands: start | stop | status | env. Everything lives in $NINF_SLURM_DIR
# (default /tmp/ninf-slurm). Optional: NINF_SLURM_CPUS (CPUs of the node,
# default nproc), NINF_SLURM_TIMEOUT (seconds to wait for the node, default
# 60), NINF_SLURM_KEEP=1 (stop keeps the folder and its logs).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DIR="${NINF_SLURM_DIR:-/tmp/ninf-slurm}"
CONF="$DIR/slurm.conf"
MARKER="$DIR/.ninf-slurm"
MUNGE_SOCKET="$DIR/run/munge.socket"
TIMEOUT="${NINF_SLURM_TIMEOUT:-60}"
# The daemons are in /usr/sbin, which a non-login PATH may lack.
export PATH="$PATH:/usr/sbin:/sbin"
# Every Slurm client below talks to this cluster, never to a system one.
export SLURM_CONF="$CONF"

say() { echo "slurm: $*" >&2; }

# One line, exit 77: the caller's test should be skipped.
cannot_start() {
  echo "slurm: cannot start: $*" >&2
  exit 77
}

print_env() {
  printf 'export SLURM_CONF=%q\n' "$CONF"
  printf 'export NINF_SLURM_DIR=%q\n' "$DIR"
}

# Whether pid $1 runs and is not a zombie (PID 1 here may reap late).
alive() {
  kill -0 "$1" 2>/dev/null && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# Pid from a pid file if that process is alive and runs program $2.
live_pid() {
  local file="$1" prog="$2" pid
  [ -s "$file" ] || return 1
  pid="$(tr -dc '0-9' <"$file")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$prog" ] || return 1
  alive "$pid" || return 1
  echo "$pid"
}

# SIGTERM the given pids, SIGKILL whatever is left after $1 seconds.
terminate() {
  local wait="$1" pid i running
  shift
  [ $# -gt 0 ] || return 0
  kill -TERM "$@" 2>/dev/null || true
  for ((i = 0; i < wait * 10; i++)); do
    running=0
    for pid in "$@"; do
      if alive "$pid"; then running=1; fi
    done
    [ "$running" -eq 1 ] || return 0
    sleep 0.1
  done
  kill -KILL "$@" 2>/dev/null || true
}

stop_daemon() { # name pidfile
  local pid
  if pid="$(live_pid "$2" "$1")"; then
    terminate 10 "$pid"
  fi
  rm -f "$2"
}

# Pids of the processes below $1 (children first walked, whole tree).
descendants() {
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    echo "$child"
    descendants "$child"
  done
}

# slurmstepd of this cluster: the processes holding a unix socket in our
# spool folder (each step listens on $SPOOL/<node>_<job>.<step>).
our_stepds() {
  local inodes pid fd link
  [ -d "$DIR/spool" ] || return 0
  inodes="$(awk -v d="$DIR/spool/" 'index($8, d) == 1 { print $7 }' /proc/net/unix | sort -u)"
  [ -n "$inodes" ] || return 0
  for pid in $(pgrep -x slurmstepd || true); do
    for fd in /proc/"$pid"/fd/*; do
      link="$(readlink "$fd" 2>/dev/null || true)"
      case "$link" in
      socket:\[*\])
        link="${link#socket:[}"
        if grep -qx "${link%]}" <<<"$inodes"; then
          echo "$pid"
          break
        fi
        ;;
      esac
    done
  done
}

do_stop() { # [keep]: keep the folder
  local keep="${1:-}" pids stepds pid
  if [ -f "$CONF" ] && live_pid "$DIR/run/slurmctld.pid" slurmctld >/dev/null; then
    # Cancel every job while slurmctld still answers, so the steps end cleanly.
    local jobs
    jobs="$(timeout 10 squeue -h -o %i 2>/dev/null || true)"
    if [ -n "$jobs" ]; then
      # shellcheck disable=SC2086
      timeout 10 scancel --quiet $jobs 2>/dev/null || true
      for _ in $(seq 50); do
        [ -n "$(our_stepds)" ] || break
        sleep 0.2
      done
    fi
  fi
  stop_daemon slurmd "$DIR/run/slurmd.pid"
  stop_daemon slurmctld "$DIR/run/slurmctld.pid"
  # Leftover steps (slurmd crashed or did not cancel them): their tasks
  # first, which a killed stepd would orphan, then the stepds (SIGTERM does
  # not end a stepd promptly).
  stepds="$(our_stepds)"
  if [ -n "$stepds" ]; then
    pids=""
    for pid in $stepds; do pids="$pids $(descendants "$pid")"; done
    # shellcheck disable=SC2086
    terminate 3 $pids
    # shellcheck disable=SC2086
    kill -KILL $stepds 2>/dev/null || true
  fi
  stop_daemon munged "$DIR/run/munged.pid"
  if [ -z "$keep" ] && [ -z "${NINF_SLURM_KEEP:-}" ] && [ -f "$MARKER" ]; then
    rm -rf "$DIR"
  fi
}

# Stops what start began, shows the log of the daemon that failed, exits 1.
fail() { # daemon log message
  echo "slurm: cannot start: $1: $3" >&2
  if [ -s "$2" ]; then
    echo "--- last lines of $2:" >&2
    tail -n 20 "$2" >&2
  fi
  do_stop keep
  exit 1
}

# A TCP port nobody listens on, below the usual ephemeral range so that no
# outgoing connection takes it meanwhile.
free_port() {
  local p avoid="${1:-0}"
  for _ in $(seq 200); do
    p=$((20000 + RANDOM % 12000))
    [ "$p" -ne "$avoid" ] || continue
    if [ -z "$(ss -Htan "sport = :$p" 2>/dev/null)" ]; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

node_state() {
  timeout 10 sinfo -h -N -n "$HOST" -o '%T' 2>/dev/null | head -n 1
}

do_start() {
  local prog ncpu mem_kb mem_mb ctld_port slurmd_port state deadline t0
  t0=$SECONDS
  for prog in munged munge unmunge slurmctld slurmd slurmstepd sinfo srun scontrol squeue scancel ss; do
    command -v "$prog" >/dev/null || cannot_start "$prog not found (install slurmctld, slurmd, slurm-client, munge, iproute2)"
  done
  [ "$(id -u)" -eq 0 ] || cannot_start "needs root (SlurmUser=root), running as $(id -un)"
  [ -r "$HERE/slurm.conf.in" ] || cannot_start "template $HERE/slurm.conf.in missing"

  HOST="$(hostname -s)"
  if [ -f "$CONF" ] && live_pid "$DIR/run/slurmctld.pid" slurmctld >/dev/null; then
    case "$(node_state)" in
    idle* | mix* | alloc*)
      say "already running in $DIR"
      print_env
      return 0
      ;;
    esac
  fi
  # Leftovers of an earlier run (crash, killed session): stop, start afresh.
  do_stop keep

  ncpu="${NINF_SLURM_CPUS:-$(nproc)}"
  mem_kb="$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)"
  mem_mb=$((mem_kb * 95 / 100 / 1024)) # a bit under MemTotal
  ctld_port="$(free_port)" || cannot_start "no free TCP port"
  slurmd_port="$(free_port "$ctld_port")" || cannot_start "no free TCP port"

  mkdir -p "$DIR"
  chmod 755 "$DIR"
  touch "$MARKER"
  rm -rf "$DIR/state" "$DIR/spool" "$DIR/log" "$DIR/run" "$DIR/munge"
  mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log" "$DIR/run" "$DIR/munge"
  # munged wants its key private but its socket folder open to all (x bit).
  chmod 700 "$DIR/munge"
  chmod 755 "$DIR/run"

  sed -e "s|@DIR@|$DIR|g" -e "s|@HOST@|$HOST|g" -e "s|@CPUS@|$ncpu|g" \
    -e "s|@MEM_MB@|$mem_mb|g" -e "s|@CTLD_PORT@|$ctld_port|g" \
    -e "s|@SLURMD_PORT@|$slurmd_port|g" "$HERE/slurm.conf.in" >"$CONF"

  # munged: own key, socket, pid, log and seed, so a system munged is untouched.
  local mlog="$DIR/log/munged.log"
  dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
  chmod 600 "$DIR/munge/munge.key"
  if ! munged --socket="$MUNGE_SOCKET" --key-file="$DIR/munge/munge.key" \
    --pid-file="$DIR/run/munged.pid" --log-file="$mlog" \
    --seed-file="$DIR/munge/munged.seed" </dev/null >>"$mlog" 2>&1; then
    fail munged "$mlog" "munged did not start"
  fi
  if ! munge -n -S "$MUNGE_SOCKET" 2>>"$mlog" | unmunge -S "$MUNGE_SOCKET" >/dev/null 2>>"$mlog"; then
    fail munged "$mlog" "munge credential round trip failed"
  fi

  # slurmctld, then slurmd (both daemonize; stdio away from the caller's pipe,
  # or eval "$(slurm.sh start)" would wait for them forever).
  local clog="$DIR/log/slurmctld.log" dlog="$DIR/log/slurmd.log"
  slurmctld -f "$CONF" </dev/null >>"$clog" 2>&1 || fail slurmctld "$clog" "slurmctld exited with $?"
  for _ in $(seq 100); do
    timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP' && break
    live_pid "$DIR/run/slurmctld.pid" slurmctld >/dev/null || [ ! -s "$DIR/run/slurmctld.pid" ] ||
      fail slurmctld "$clog" "slurmctld died"
    sleep 0.2
  done
  timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP' || fail slurmctld "$clog" "slurmctld does not answer"

  slurmd -f "$CONF" -N "$HOST" </dev/null >>"$dlog" 2>&1 || fail slurmd "$dlog" "slurmd exited with $?"

  deadline=$((SECONDS + TIMEOUT))
  while :; do
    state="$(node_state || true)"
    case "$state" in
    idle) break ;;
    *drain* | inval* | fail*)
      fail slurmd "$dlog" "node $HOST is $state: $(scontrol show node "$HOST" 2>/dev/null | grep -o 'Reason=.*' || true)"
      ;;
    esac
    sleep 0.5
    live_pid "$DIR/run/slurmctld.pid" slurmctld >/dev/null || fail slurmctld "$clog" "slurmctld died"
    live_pid "$DIR/run/slurmd.pid" slurmd >/dev/null || fail slurmd "$dlog" "slurmd died"
    [ "$SECONDS" -lt "$deadline" ] ||
      fail slurmd "$dlog" "node $HOST not idle after ${TIMEOUT}s (state: ${state:-none})"
  done
  say "node $HOST idle after $((SECONDS - t0))s (folder $DIR, ports $ctld_port/$slurmd_port)"
  print_env
}

do_status() {
  local out state
  HOST="$(hostname -s)"
  if [ -f "$CONF" ] && out="$(timeout 10 sinfo 2>&1)"; then
    echo "$out"
    state="$(node_state || true)"
    case "$state" in
    idle* | mix* | alloc* | comp*) echo "slurm: up ($DIR)" && return 0 ;;
    esac
    echo "slurm: node $HOST is ${state:-unknown}"
    return 1
  fi
  echo "slurm: not running ($DIR)"
  return 1
}

case "${1:-}" in
start) do_start ;;
stop) do_stop ;;
status) do_status ;;
env)
  [ -f "$CONF" ] || {
    say "no cluster in $DIR (run: $0 start)"
    exit 1
  }
  print_env
  ;;
*)
  echo "usage: $0 start|stop|status|env" >&2
  exit 2
  ;;
esac
