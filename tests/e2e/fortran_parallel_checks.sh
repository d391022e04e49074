# Sourced by tests/slurm/slurm_test.sh and tests/e2e/remote_ranks.sh: the
# Fortran EP and Linpack examples calling ep_mpi and pdgesv through a ninfd
# started with the caller's flags. The caller has set $ninfd, $work (a
# private folder), $fortran_ep, $fortran_linpack and failed=0, and kills
# $daemon in its cleanup.
#
#   fortran_parallel_checks NINFD_FLAGS...   (sets failed=1 on a failure)

check() {  # check WORD COMMAND...: the command succeeds and prints WORD
  local output
  output=$("${@:2}" 2>&1)
  local rc=$?
  echo "$output"
  if [[ $rc -ne 0 || "$output" != *"$1"* ]]; then
    echo "$(basename "$0"): FAILED: ${*:2}" >&2
    failed=1
  fi
}

fortran_parallel_checks() {
  "$ninfd" --port 0 --ready-file "$work/ready" --log-level warn "$@" 2>"$work/ninfd.log" &
  daemon=$!
  for _ in $(seq 100); do [[ -s "$work/ready" ]] && break; sleep 0.1; done
  export NINF_SERVER=127.0.0.1:$(head -n1 "$work/ready")
  check VERIFIED "$fortran_ep" 24 ep_mpi
  check PASSED "$fortran_linpack" 300 pdgesv
  [[ $failed -eq 0 ]] || cat "$work/ninfd.log" >&2
}
