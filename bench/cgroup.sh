# shellcheck shell=bash
# bench/cgroup.sh - control groups for benchmarks that must keep the server
# and its clients apart (seed 004's set-ups): a group with its own CPUs, an
# optional CPU quota (a weak client), and its measured CPU time, which is
# what "utilization" means in those tables (not booked compute time).
# Sourced, never run; works on cgroup v2 (Debian 12's default) and on the
# v1 hierarchies some VMs still mount (cpuset + cpu + cpuacct).
#
#   cg_make NAME CPUS [QUOTA]   a new group NAME (prefixed with our pid) on
#                               CPUS (a cpuset list, "" = all), QUOTA in
#                               percent of one CPU ("" = none); removed by
#                               cg_remove or at exit (bench_on_exit when
#                               bench/lib.sh is loaded)
#   cg_exec NAME COMMAND...     COMMAND inside NAME (exec: same pid, so
#                               start_bg and bench_track see the program)
#   cg_usage_usec NAME          CPU time of everything that ran in NAME,
#                               exited processes included, in microseconds
#   cg_cpus NAME                how many CPUs NAME may use
#   cg_remove NAME              kills what still runs in NAME, then removes it
#
# Why cgroups and not only taskset: taskset alone leaves CPU time of exited
# executables uncounted (a reused executable's time is in no /proc file
# once it is gone), and has no quota for the weak client of Figs. 3/4.

cg_root=/sys/fs/cgroup
if [[ -f $cg_root/cgroup.controllers ]]; then
  cg_version=2
else
  cg_version=1
fi

# The directories of NAME, one per hierarchy (v1) or the one (v2).
_cg_dirs() {
  local name="ninf-bench-$$-$1"
  if [[ $cg_version == 2 ]]; then
    echo "$cg_root/$name"
  else
    echo "$cg_root/cpuset/$name $cg_root/cpu/$name $cg_root/cpuacct/$name"
  fi
}

cg_make() {
  local name=$1 cpus=${2:-} quota=${3:-} dir
  [[ -z $cpus ]] && cpus=$(cat /sys/devices/system/cpu/online)
  if [[ $cg_version == 2 ]]; then
    # The controllers must be enabled in the parent for a child to have them.
    echo "+cpu +cpuset" >"$cg_root/cgroup.subtree_control" 2>/dev/null || true
    dir=$(_cg_dirs "$name")
    mkdir -p "$dir" || { echo "cgroup.sh: cannot make $dir (root needed)" >&2; return 1; }
    echo "$cpus" >"$dir/cpuset.cpus"
    if [[ -n $quota ]]; then
      echo "$((quota * 1000)) 100000" >"$dir/cpu.max"
    fi
  else
    for dir in $(_cg_dirs "$name"); do
      mkdir -p "$dir" || { echo "cgroup.sh: cannot make $dir (root needed)" >&2; return 1; }
    done
    dir=$cg_root/cpuset/ninf-bench-$$-$name
    echo "$cpus" >"$dir/cpuset.cpus"
    cat "$cg_root/cpuset/cpuset.mems" >"$dir/cpuset.mems"
    if [[ -n $quota ]]; then
      echo 100000 >"$cg_root/cpu/ninf-bench-$$-$name/cpu.cfs_period_us"
      echo "$((quota * 1000))" >"$cg_root/cpu/ninf-bench-$$-$name/cpu.cfs_quota_us"
    fi
  fi
  if declare -F bench_on_exit >/dev/null; then
    bench_on_exit cg_remove "$name"
  fi
}

cg_exec() {
  local name=$1
  shift
  local procs=""
  for dir in $(_cg_dirs "$name"); do procs+=" $dir/cgroup.procs"; done
  # The shell moves itself in, then becomes COMMAND: children inherit.
  # shellcheck disable=SC2016
  sh -c 'for p in $0; do echo $$ >"$p"; done; exec "$@"' "$procs" "$@"
}

cg_usage_usec() {
  local name=$1
  if [[ $cg_version == 2 ]]; then
    awk '$1 == "usage_usec" { print $2 }' "$(_cg_dirs "$name")/cpu.stat"
  else
    echo $(($(cat "$cg_root/cpuacct/ninf-bench-$$-$name/cpuacct.usage") / 1000))
  fi
}

cg_cpus() {
  local name=$1 file list n=0 part
  if [[ $cg_version == 2 ]]; then
    file="$(_cg_dirs "$name")/cpuset.cpus.effective"
  else
    file="$cg_root/cpuset/ninf-bench-$$-$name/cpuset.cpus"
  fi
  list=$(cat "$file")
  IFS=, read -ra parts <<<"$list"
  for part in "${parts[@]}"; do
    if [[ $part == *-* ]]; then
      n=$((n + ${part#*-} - ${part%-*} + 1))
    else
      n=$((n + 1))
    fi
  done
  echo "$n"
}

cg_remove() {
  local name=$1 dir pid
  for dir in $(_cg_dirs "$name"); do
    [[ -d $dir ]] || continue
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      pids=$(cat "$dir/cgroup.procs" 2>/dev/null)
      [[ -z $pids ]] && break
      for pid in $pids; do kill -KILL "$pid" 2>/dev/null; done
      sleep 0.1
    done
    # A killed process leaves the group only once it has fully exited:
    # rmdir fails with EBUSY meanwhile, so try for a second.
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      rmdir "$dir" 2>/dev/null && break
      sleep 0.1
    done
    [[ ! -d $dir ]] || echo "cgroup.sh: could not remove $dir" >&2
  done
}
