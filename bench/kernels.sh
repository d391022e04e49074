#!/usr/bin/env bash
# bench/kernels.sh - remote dgesv on one host against the same solve done
# locally, once on the OpenBLAS kernels the library picks by itself and once
# on those ninfd gives its executables (ninfd --openblas-core; docs/server.md:
# on a CPU the library does not know it falls back to generic SSE3 kernels).
# Both sides of each row run the same kernels, so the ratio is the call's
# cost; the rows together show what the kernels are worth (issue 32, part 2).
# With --huge-pages LIST, each kernel's rows are repeated with that many
# huge pages reserved (vm.nr_hugepages; 0 = none: the shared segments of the
# same-host path then have ordinary pages), restored at exit.
#
#   bash bench/kernels.sh BUILD_DIR [--out FILE] [--quick] [--runs R] [--sizes LIST]
#       [--huge-pages LIST]
#
# Per run and kernel: a fresh ninfd (--slots 1, every core for the one call,
# as the local solve gets), then examples/c/linpack_demo at the first size:
# the first call users see (remote first, cold), then bench_dgesv at every
# size: best of --repeats warm solves each side, then the largest resident
# peak one dgesv executable reached over one call (ninfd --status; sizes
# ascending, so it is this size's). Kernels alternate within each run. Writes a Markdown table (FILE, default a new
# bench/results/kernels-DATE.md) and the raw lines beside it (.raw.txt).
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_declare kernels "Remote dgesv against local on one host, on the library's OpenBLAS kernels and on ninfd's."
bench_option --runs R runs 2 1 "whole runs, the kernels alternated in each"
bench_option --sizes LIST sizes 1000,2000,4000 1000 "dgesv orders n"
bench_option --repeats N repeats 5 1 "warm solves per side and size (best kept)"
bench_option --huge-pages LIST huge_pages 0 "" "huge pages reserved per row set (vm.nr_hugepages)"
bench_parse "$@"
bench_need server/ninfd bench/bench_dgesv examples/c/linpack_demo stubs/registry/dgesv

cores=$(nproc)
export OPENBLAS_NUM_THREADS=$cores
# The library's own pick: asked of it with no override (the OPENBLAS_CORETYPE
# that bench/lib.sh exported is ninfd's choice).
library=$(env -u OPENBLAS_CORETYPE OPENBLAS_NUM_THREADS=1 /usr/bin/python3 -c '
import ctypes
lib = ctypes.CDLL("libopenblas.so.0")
lib.openblas_get_corename.restype = ctypes.c_char_p
print(lib.openblas_get_corename().decode())')
chosen=$(env -u OPENBLAS_CORETYPE "$build/server/ninfd" --openblas-core)
kernels=("$library")
[[ $chosen == "$library" ]] || kernels+=("$chosen")
IFS=, read -r -a ns <<<"$sizes"
IFS=, read -r -a page_counts <<<"$huge_pages"
printf '%s\n' "${ns[@]}" | sort -nC || { echo "kernels.sh: --sizes must be ascending" >&2; exit 2; }
hugepages_file=/proc/sys/vm/nr_hugepages
pages_before=$(cat "$hugepages_file")
for pages in "${page_counts[@]}"; do
  [[ $pages == "$pages_before" ]] && continue
  bench_need_root "--huge-pages reserves huge pages"
  bench_on_exit sh -c "echo $pages_before > $hugepages_file"  # restored at exit, once
  break
done

: >"$raw_log"
for run in $(seq "$runs"); do
  for kernel in "${kernels[@]}"; do
    for pages in "${page_counts[@]}"; do
      export OPENBLAS_CORETYPE=$kernel
      [[ $pages == "$(cat "$hugepages_file")" ]] || echo "$pages" >"$hugepages_file"
      tag="run=$run kernel=$kernel pages=$(cat "$hugepages_file")"
      start_daemon -- --slots 1
      first=$("$build/examples/c/linpack_demo" "${ns[0]}" | tee -a "$work/demo.txt" |
        sed -n 's/^remote \/ local GFLOPS = //p')
      echo "$tag first n=${ns[0]} ratio=$first" | tee -a "$raw_log"
      for n in "${ns[@]}"; do
        line=$("$build/bench/bench_dgesv" --runs "$repeats" "$n")
        peak=$("$build/server/ninfd" --status --server "$NINF_SERVER" |
          sed -n 's/^function\.dgesv\.peak_rss_bytes://p')
        echo "$tag $line peak_rss_bytes=${peak:-0}" | tee -a "$raw_log"
      done
      stop_daemon
    done
  done
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
{
  echo "# Remote dgesv on one host: OpenBLAS kernels"
  echo
  echo "\`bash bench/kernels.sh BUILD_DIR$([[ $quick -eq 1 ]] && echo ' --quick')\`, $(date -u '+%Y-%m-%d %H:%M UTC'),"
  echo "$cpu (family $(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -n1), model"
  echo "$(sed -n 's/^model[[:space:]]*: //p' /proc/cpuinfo | head -n1)), $cores cores, OPENBLAS_NUM_THREADS=$cores, ninfd --slots 1 on the same"
  echo "cores, Ninf's same-host path (Unix socket, shared memory). The library picks \`$library\`;"
  echo "ninfd gives its executables \`$chosen\`. Each row runs both sides on the row's kernels."
  echo "first call: examples/c/linpack_demo (remote first, on a fresh ninfd), remote/local GFLOPS."
  echo "warm: bench_dgesv, best of $repeats solves each side after one unmeasured."
  echo "huge pages: vm.nr_hugepages during the row (2 MiB each; 0: the shared segment has 4 KiB pages)."
  echo "executable peak: the largest resident memory one dgesv executable reached over one call"
  echo "(VmHWM over the call plus the huge pages mapped, ninfd --status); arrays: the call's A, b and ipiv."
  echo
  echo "| run | kernels | huge pages | n | local GFLOPS | remote GFLOPS | remote / local (warm) | first call (n = ${ns[0]}) | executable peak (MiB) | arrays (MiB) | peak - arrays (MiB) |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  awk '
    { delete v; for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
      key = v["run"] " " v["kernel"] " " v["pages"] }
    / first / { first[key] = v["ratio"]; next }
    / dgesv / { n = v["n"]; arrays = (8 * n * n + 8 * n + 4 * n) / 1048576; peak = v["peak_rss_bytes"] / 1048576
                printf "| %s | %s | %s | %s | %.2f | %.2f | %.3f | %s | %.1f | %.1f | %.1f |\n", v["run"],
                  v["kernel"], v["pages"], n, v["local_gflops"], v["remote_gflops"], v["ratio"], first[key],
                  peak, arrays, peak - arrays }
  ' "$raw_log"
} >"$out"
echo "kernels.sh: wrote $out (raw log $raw_log)" >&2
