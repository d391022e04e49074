#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, docs/fuzzing.md) into build-fuzz with
# clang, AddressSanitizer and UndefinedBehaviorSanitizer, then runs each one:
#
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET (default 20)] [TARGET...]
#
# For each target, every input in fuzz/regressions/TARGET/ runs once first
# (all must pass); then the target fuzzes for SECONDS over a temporary copy
# of fuzz/corpus/TARGET/ and the regressions. A crash, leak, timeout or
# out-of-memory input is copied into fuzz/regressions/TARGET/ to be
# committed with its fix. Prints one summary line per target; exit status 0
# only when every target passed.
set -uo pipefail
cd "$(dirname "$0")/.."

ALL_TARGETS=(frame_fuzz request_reader_fuzz proto_header_fuzz dim_expr_fuzz idl_fuzz settings_fuzz
  meta_request_fuzz tls_handshake_fuzz)
BUILD=${NINF_FUZZ_BUILD:-build-fuzz}

seconds=20
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${ALL_TARGETS[@]}")
for t in "${targets[@]}"; do
  if [[ ! " ${ALL_TARGETS[*]} " =~ " $t " ]]; then
    echo "fuzz: unknown target '$t' (${ALL_TARGETS[*]})" >&2
    exit 2
  fi
done

# The project's packages, clang and libclang-rt-dev (libFuzzer) among them.
bash scripts/deps.sh || exit 1

# The whole project is built with the sanitizers and libFuzzer's coverage
# instrumentation (-fsanitize=fuzzer-no-link), so that the fuzzers see and
# check the libraries they drive; only the targets link libFuzzer itself.
# Only the fuzz targets are built: no Fortran, no tests.
start=$(date +%s)
if [ ! -f "$BUILD/build.ninja" ]; then
  CC=clang CXX=clang++ meson setup "$BUILD" \
    -Dfuzz=true -Dtests=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args=-fsanitize=fuzzer-no-link -Dcpp_args=-fsanitize=fuzzer-no-link \
    -Dunity=on -Dunity_size=12 || exit 1  # as scripts/sanitize.sh: a third of the time
fi
nice -n 10 meson compile -C "$BUILD" -j "${NINF_JOBS:-1}" fuzz-targets || exit 1
echo "fuzz: build took $(($(date +%s) - start)) s"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

work=$(mktemp -d /tmp/ninf-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT

summary=()
failed=0
for t in "${targets[@]}"; do
  exe=$BUILD/fuzz/$t
  regress_dir=fuzz/regressions/$t
  mkdir -p "$regress_dir"
  mapfile -t regressions < <(find "$regress_dir" -maxdepth 1 -type f \
    ! -name 'README*' ! -name '.gitkeep' | sort)

  # 1. Every known bad input must pass now; each runs on its own, so that
  # all the failing ones are named.
  bad=()
  for r in "${regressions[@]}"; do
    if ! nice -n 10 "$exe" -timeout=10 -rss_limit_mb=2048 "$r" >"$work/$t.regress.log" 2>&1; then
      bad+=("${r##*/}")
      echo "fuzz: $t: regression $r fails:" >&2
      grep -E 'ERROR|SUMMARY|fuzz property|runtime error|^ +#[0-9]+ ' "$work/$t.regress.log" |
        head -30 >&2
    fi
  done
  if [ ${#bad[@]} -gt 0 ]; then
    summary+=("$t: FAILED ${#bad[@]} of ${#regressions[@]} regressions: ${bad[*]} (not fuzzed)")
    failed=1
    continue
  fi

  # 2. Fuzz over a scratch copy of the corpus, so that the tree stays as it is.
  corpus=$work/$t.corpus
  artifacts=$work/$t.artifacts
  mkdir -p "$corpus" "$artifacts"
  cp fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null
  [ ${#regressions[@]} -eq 0 ] || cp "${regressions[@]}" "$corpus"/
  seeds=$(find "$corpus" -type f | wc -l)
  log=$work/$t.log
  nice -n 10 "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1
  status=$?
  runs=$(grep -oE '^stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
  grown=$(($(find "$corpus" -type f | wc -l) - seeds))
  mapfile -t found < <(find "$artifacts" -type f \
    \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \))
  if [ $status -ne 0 ] || [ ${#found[@]} -gt 0 ]; then
    failed=1
    echo "fuzz: $t found a problem (exit status $status); the report:" >&2
    sed -n '/==[0-9]*==ERROR\|fuzz property failed\|runtime error\|ALARM\|deadly signal/,$p' \
      "$log" | head -80 >&2
    for f in "${found[@]}"; do
      cp "$f" "$regress_dir/"
      echo "fuzz: saved $regress_dir/$(basename "$f"): fix the bug, then commit the input" \
        "with the fix (it runs first on every fuzz.sh run from now on)" >&2
    done
    [ ${#found[@]} -gt 0 ] || tail -20 "$log" >&2
    summary+=("$t: FAILED after ${runs:-?} runs: ${found[*]##*/} (reproduce: $exe FILE)")
  else
    line="$t: ok, ${runs:-?} runs in ${seconds} s, ${cov:-cov ?}, corpus $seeds seeds"
    summary+=("$line +$grown new, ${#regressions[@]} regressions pass")
  fi
done

echo "fuzz: summary (${seconds} s per target)"
printf '  %s\n' "${summary[@]}"
exit $failed
