#!/usr/bin/env bash
# The Slurm launcher's tests on a private single-node Slurm cluster: starts
# the cluster (slurm.sh), takes an allocation of every CPU, and runs in it
# (SLURM_JOB_ID set, as for a ninfd started by salloc or sbatch)
#   1. the C tests of tests/e2e/slurm_test.cc ([slurm]);
#   2. the Fortran EP and Linpack examples calling ep_mpi and pdgesv through
#      a ninfd whose executables are Slurm steps.
# Then cancels the allocation and stops the cluster, whatever happened.
# Exit status 77 (Meson: skipped) when Slurm cannot start on this machine.
#
#   slurm_test.sh TEST_PROGRAM NINFD FORTRAN_EP FORTRAN_LINPACK
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
test_program=$1 ninfd=$2 fortran_ep=$3 fortran_linpack=$4

export NINF_SLURM_DIR=/tmp/ninf-slurm-test-$$
out=$(bash "$here/slurm.sh" start)
status=$?
if [[ $status -ne 0 ]]; then
  echo "$out"
  exit "$status"  # 77 when Slurm cannot run here: the test is skipped
fi
eval "$out"
job=""
daemon=""
work=$(mktemp -d /tmp/ninf-slurm-work.XXXXXX)
cleanup() {
  [[ -n "$daemon" ]] && kill -TERM "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  [[ -n "$job" ]] && scancel "$job"
  bash "$here/slurm.sh" stop >/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

name="ninf-tests-$$"
salloc --no-shell -n "$(nproc)" -J "$name" 2>/dev/null
job=$(squeue -h -n "$name" -o %i)
if [[ -z "$job" ]]; then
  echo "slurm_test: no allocation (squeue shows no job $name)" >&2
  exit 1
fi
export SLURM_JOB_ID=$job
echo "slurm_test: allocation $job on $(squeue -h -j "$job" -o %N)"

failed=0
"$test_program" "[slurm]" || failed=1

# Fortran clients, the parallel routines as Slurm steps.
source "$here/../e2e/fortran_parallel_checks.sh"
fortran_parallel_checks --launcher slurm --mpi-ranks 2
exit "$failed"
