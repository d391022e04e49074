#!/usr/bin/env bash
# bench/offload.sh - an unmodified Fortran Linpack (tests/offload/linpack.f90:
# random A, b = A * ones, one dgesv) run locally, offloaded by
# libninf_offload, and under its default policy, for n = 200 ... 4000, the
# whole sweep twice; written up as bench/results/offload.md (or --out FILE,
# never over an existing file).
#
#   bash bench/offload.sh BUILD_DIR [--out FILE] [--quick] [--sizes "1000 2000"]
#                         [--server HOST:PORT]
#
# The program is built here with plain gfortran -O2 ... -llapack (nothing of
# Ninf in it). Local: the binary as built. Offloaded: the same binary under
# LD_PRELOAD=BUILD_DIR/offload/libninf_offload.so with
# NINF_OFFLOAD_MIN_FLOPS=0, so every dgesv goes. Default: the same binary
# and library with no threshold set, as a user runs it: the policy decides
# (docs/offload.md), and the table says where the call went, why, and its
# time against the local run's. Each run reports the whole
# program's wall time, and the dgesv call's own time from
# NINF_OFFLOAD_LOG (the local runs are logged too, under NINF_OFFLOAD=0, so
# both columns time the same thing the same way).
#
# Without --server, a ninfd is started here with --slots 1 (the one call
# gets every core, as the local run does with OPENBLAS_NUM_THREADS = cores):
# client and server then share one machine, and the ratio measures what
# offloading costs (moving 16 n^2 bytes over loopback and the call's fixed
# costs), not what a faster server gains. --server points at a real one.
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_declare offload "An unmodified Fortran Linpack, local against offloaded by libninf_offload."
bench_option --sizes LIST sizes "200 1000 2000 3000 4000" "200 1000" "the matrix orders n"
bench_option --server HOST:PORT server "" "" "a running ninfd to offload to (default: one started here)"
# The brief of record names the report bench/results/offload.md: that is the
# default here, which lib.sh still never writes over.
has_out=0
for arg in "$@"; do [[ $arg == --out ]] && has_out=1; done
if [[ $has_out -eq 0 && $# -ge 1 && $1 != -* ]]; then
  set -- "$@" --out "$(cd "$(dirname "$0")" && pwd)/results/offload.md"
fi
bench_parse "$@"
bench_need server/ninfd offload/libninf_offload.so stubs/registry/dgesv

runs=2
[[ $quick -eq 1 ]] && runs=1
cores=$(nproc)
export OPENBLAS_NUM_THREADS=$cores
lib="$build/offload/libninf_offload.so"
fc=${FC:-gfortran}

: >"$raw_log"
linpack="$work/linpack"
"$fc" -O2 "$here/../tests/offload/linpack.f90" -o "$linpack" -llapack
echo "offload.sh: built $linpack with $fc -O2 ... -llapack" | tee -a "$raw_log" >&2

if [[ -n $server ]]; then
  export NINF_SERVER=$server
else
  start_daemon -- --slots 1
fi

# One run: prints "MODE N RUN WALL_SECONDS CALL_SECONDS WHERE".
one_run() {
  local mode=$1 n=$2 run=$3 log="$work/offload-$1-$2-$3.log" t0 t1 line
  rm -f "$log" "$work/x.bin"
  t0=$(date +%s.%N)
  if [[ $mode == local ]]; then
    NINF_OFFLOAD=0 NINF_OFFLOAD_LOG=$log LD_PRELOAD=$lib "$linpack" "$n" "$work/x.bin" >>"$raw_log"
  elif [[ $mode == default ]]; then
    NINF_OFFLOAD_LOG=$log LD_PRELOAD=$lib "$linpack" "$n" "$work/x.bin" >>"$raw_log"
  else
    NINF_OFFLOAD_MIN_FLOPS=0 NINF_OFFLOAD_LOG=$log LD_PRELOAD=$lib "$linpack" "$n" "$work/x.bin" \
      >>"$raw_log"
  fi
  t1=$(date +%s.%N)
  line=$(grep '^ninf_offload ' "$log" 2>/dev/null | head -n1 || true)
  echo "$line" >>"$raw_log"
  local seconds where
  seconds=$(sed -n 's/.* seconds=\([0-9.]*\) .*/\1/p' <<<"$line")
  where=$(sed -n 's/.* where=\([a-z]*\) .*/\1/p' <<<"$line")
  # Why the policy decided so: kept beside the results (it has spaces).
  sed -n 's/.* why="\(.*\)"$/\1/p' <<<"$line" >"$work/why-$mode-$n-$run.txt"
  echo "$mode $n $run $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') ${seconds:-nan} ${where:-none}"
}

results="$work/results.txt"
: >"$results"
# A warm-up call first: the server starts dgesv's executable and the client
# fetches the interface, once, outside the measurements.
one_run offloaded 200 0 >/dev/null
for run in $(seq 1 "$runs"); do
  for n in $sizes; do
    for mode in local offloaded default; do
      one_run "$mode" "$n" "$run" | tee -a "$results" "$raw_log" >&2
    done
  done
done
stop_daemon

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
{
  echo "# Offloading an unmodified Linpack (libninf_offload)"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $cpu, $cores cores, $(uname -r)$([[ $quick -eq 1 ]] && echo ', --quick (numbers mean little)')."
  echo "Server: ${server:-a ninfd on this machine (--slots 1), over loopback}. OPENBLAS_NUM_THREADS=$cores."
  echo "The program: tests/offload/linpack.f90 built with $fc -O2 ... -llapack; offloaded under"
  echo "LD_PRELOAD with NINF_OFFLOAD_MIN_FLOPS=0; \"default\": the same with no threshold set, the policy"
  echo "deciding (each run is a fresh process: its model has measured nothing yet). Seconds: the dgesv"
  echo "call (from NINF_OFFLOAD_LOG) and the whole program (wall). Ratios: against the local dgesv time"
  echo "(above 1: slower than local)."
  echo
  echo "| n | run | local dgesv s | offloaded dgesv s | ratio | local program s | offloaded program s | offloaded call went |"
  echo "|---|---|---|---|---|---|---|---|"
  awk '
    $1 == "local" { lw[$2, $3] = $4; lc[$2, $3] = $5 }
    $1 == "offloaded" { ow[$2, $3] = $4; oc[$2, $3] = $5; ww[$2, $3] = $6; order[++k] = $2 SUBSEP $3 }
    END {
      for (i = 1; i <= k; i++) {
        split(order[i], p, SUBSEP)
        key = order[i]
        ratio = (lc[key] > 0) ? sprintf("%.2f", oc[key] / lc[key]) : "-"
        printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", p[1], p[2], lc[key], oc[key], ratio,
          lw[key], ow[key], ww[key]
      }
    }' "$results"
  echo
  echo "The default policy (no NINF_OFFLOAD_MIN_FLOPS):"
  echo
  echo "| n | run | went | why | dgesv s | / local | program s | / local program |"
  echo "|---|---|---|---|---|---|---|---|"
  while read -r mode n run wall call where; do
    [[ $mode == default ]] || continue
    local_line=$(awk -v n="$n" -v r="$run" '$1 == "local" && $2 == n && $3 == r' "$results")
    read -r _ _ _ lwall lcall _ <<<"$local_line"
    printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$n" "$run" "$where" \
      "$(cat "$work/why-default-$n-$run.txt")" "$call" \
      "$(awk -v a="$call" -v b="$lcall" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')" \
      "$wall" "$(awk -v a="$wall" -v b="$lwall" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')"
  done <"$results"
} >"$out"
echo "offload.sh: wrote $out (raw log $raw_log)" >&2
