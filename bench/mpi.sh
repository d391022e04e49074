#!/usr/bin/env bash
# bench/mpi.sh - Backend "MPI" and the Slurm launcher (issue 12), every
# figure against a baseline of the same run:
#   1. NAS EP class A (m = 28) as ep_mpi with 1 and 2 ranks: the speed-up
#      (target: 2 ranks >= 1.8 x 1 rank), next to the one-process ep;
#   2. Linpack n = 4000: pdgesv (ScaLAPACK, 2 ranks) against dgesv (OpenBLAS,
#      the cores of the call as threads);
#   3. the first, reused one-shot and handle call of null_mpi against the
#      one-process null, with the local launcher (mpirun) and the Slurm
#      launcher (target: a reused MPI executable's handle call within 2 x a
#      non-MPI handle's), and null_mpi again with launch_address = 127.0.0.1
#      (rank 0 claims over TCP, every call redirected: the cost of ranks on
#      other hosts) against the passed socket;
#   4. one-shot calls per second of null through Slurm: reused steps against
#      one srun per call (executable_max_calls = 1).
# Parts 3 (Slurm) and 4 run on a private single-node Slurm cluster
# (tests/slurm/slurm.sh), inside one allocation; they are left out, and the
# table says so, where Slurm cannot start.
#
#   bash bench/mpi.sh BUILD_DIR [--out FILE] [--quick] [--calls K]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file, and the default is a
# new bench/results/mpi-DATE.md.)
#
# The raw lines go next to the report (FILE with .raw.txt).
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_declare mpi "Backend MPI and the Slurm launcher: EP, pdgesv, null_mpi latencies, srun reuse."
bench_option --calls K calls 3 1 "timed calls per EP and Linpack row, after one warm-up call"
bench_parse "$@"
bench_need server/ninfd bench/bench_placed bench/bench_mpi_latency bench/bench_throughput
raw=$raw_log
slurm_job=""
# Not under $work (mode 0700): munged refuses a socket folder others cannot enter.
export NINF_SLURM_DIR=/tmp/ninf-slurm-bench-$$
stop_slurm() {
  [[ -z "$slurm_job" ]] || scancel "$slurm_job" 2>/dev/null
  bash "$here/../tests/slurm/slurm.sh" stop >/dev/null 2>&1 || true
}
bench_on_exit stop_slurm
: >"$raw"

# timed LABEL -- bench_placed arguments: K calls after one warm-up call, each
# line tagged with LABEL.
timed() {
  local label=$1
  shift 2
  "$build/bench/bench_placed" --calls 1 "$@" >/dev/null  # starts the job
  "$build/bench/bench_placed" --calls "$calls" "$@" | sed "s/^/$label /" | tee -a "$raw" >&2
}

# 1, 2: EP and Linpack with the local launcher.
start_daemon -- --mpi-ranks 1 --warm-executables 0
timed "ep_ranks=1" -- --name ep_mpi ep 28
timed "ep_serial" -- --name ep ep 28
stop_daemon
start_daemon -- --mpi-ranks 2 --warm-executables 0
timed "ep_ranks=2" -- --name ep_mpi ep 28
timed "linpack_pdgesv" -- --name pdgesv dgesv 4000
timed "linpack_dgesv" -- --name dgesv dgesv 4000
# 3, local: a fresh daemon for each routine, so that the first call starts
# the executable.
for routine in null_mpi null; do
  stop_daemon
  start_daemon -- --mpi-ranks 2 --warm-executables 0
  "$build/bench/bench_mpi_latency" --calls 2000 "$routine" | sed 's/^/launcher=local /' |
    tee -a "$raw" >&2
done
# The same through a redirect (launch_address): what ranks on other hosts cost.
stop_daemon
start_daemon -- --mpi-ranks 2 --warm-executables 0 --launch-address 127.0.0.1
"$build/bench/bench_mpi_latency" --calls 2000 null_mpi | sed 's/^/launcher=local-tcp /' |
  tee -a "$raw" >&2
stop_daemon

# 3, 4 with Slurm.
slurm=no
if slurm_env=$(bash "$here/../tests/slurm/slurm.sh" start 2>"$work/slurm.log"); then
  eval "$slurm_env"
  salloc --no-shell -n "$(nproc)" -J "ninf-bench-$$" 2>/dev/null
  slurm_job=$(squeue -h -n "ninf-bench-$$" -o %i)
  [[ -n "$slurm_job" ]] && slurm=yes
else
  echo "$0: no Slurm here, its parts are left out:" >&2
  cat "$work/slurm.log" >&2
fi
if [[ $slurm == yes ]]; then
  export SLURM_JOB_ID=$slurm_job
  for routine in null_mpi null; do
    start_daemon -- --launcher slurm --mpi-ranks 2 --warm-executables 0
    "$build/bench/bench_mpi_latency" --calls 2000 "$routine" | sed 's/^/launcher=slurm /' |
      tee -a "$raw" >&2
    stop_daemon
  done
  start_daemon -- --launcher slurm --mpi-ranks 2 --warm-executables 0 --launch-address 127.0.0.1
  "$build/bench/bench_mpi_latency" --calls 2000 null_mpi | sed 's/^/launcher=slurm-tcp /' |
    tee -a "$raw" >&2
  stop_daemon
  for max_calls in 1000 1; do
    start_daemon -- --launcher slurm --warm-executables 0 --executable-max-calls "$max_calls"
    "$build/bench/bench_throughput" --seconds 5 | sed "s/^/slurm_max_calls=$max_calls /" |
      tee -a "$raw" >&2
    stop_daemon
  done
  unset SLURM_JOB_ID
fi

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
{
  echo "# Backend \"MPI\" and the Slurm launcher (issue 12), $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "\`bench/mpi.sh $(basename "$build")\` on $cpu ($(nproc) vCPUs), commit" \
    "$(git -C "$here" rev-parse --short HEAD). Times are medians of $calls calls after a"
  echo "warm-up call that started the job; latencies medians of 2,000 calls."
  echo
  /usr/bin/python3 "$here/report.py" mpi "$raw" "$slurm"
} >"$out"
echo "mpi.sh: wrote $out" >&2
