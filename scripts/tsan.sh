#!/usr/bin/env bash
# ThreadSanitizer on the client library's shared state: builds only what the
# tests below need (libninf, those tests, ninfd and the standard-library
# executables they call) into build-tsan, instrumented, and runs them. A
# data race, a lock-order inversion or a use after free between threads in
# any of those programs fails its test (halt_on_error). Prints
# "tsan: N passed, N failed" counted from Meson's test log; exit status 0
# only when nothing failed.
#
#   bash scripts/tsan.sh [meson test arguments]
#
# NINF_JOBS sets the build's parallelism (default: every core).
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${NINF_TSAN_BUILD:-build-tsan}
# The tests, and the targets they run: the test programs themselves, and
# what they start (ninfd, which starts the executables of stubs/registry).
TESTS=(e2e_wait_race)
TARGETS=(tests/e2e/test_wait_race server/ninfd)
for f in dgesv dmmul daxpy ep null echo sink source; do
  TARGETS+=("stubs/registry/$f")
done
fail() {
  echo "tsan: 0 passed, 1 failed ($1)"
  exit 1
}

bash scripts/deps.sh || fail "deps"
start=$(date +%s)
if [ ! -f "$BUILD/build.ninja" ]; then
  # -O1 and line tables only (-g1): ThreadSanitizer's reports name files
  # and lines, and the build costs a fraction of -O2 -g. Python's extension
  # and MPI are left out: nothing here runs them.
  meson setup "$BUILD" -Db_sanitize=thread -Db_lundef=false \
    -Doptimization=1 -Ddebug=false -Dc_args=-g1 -Dcpp_args=-g1 \
    -Dpython=disabled -Dmpi=disabled -Dman=disabled \
    -Dunity=on -Dunity_size=12 || fail "meson setup"  # as scripts/sanitize.sh
fi
nice -n 10 meson compile -C "$BUILD" -j "${NINF_JOBS:-$(nproc)}" "${TARGETS[@]}" || fail "build"
echo "tsan: build took $(($(date +%s) - start)) s"

# second_deadlock_stack: a lock-order report shows both acquisitions.
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan.supp"
rm -f "$BUILD/meson-logs/testlog.json"
start=$(date +%s)
# Instrumented programs run several times slower: three times the time limit.
meson test -C "$BUILD" --no-rebuild --num-processes 2 --print-errorlogs \
  --timeout-multiplier "${NINF_TIMEOUT_MULTIPLIER:-3}" "$@" "${TESTS[@]}"
echo "tsan: tests took $(($(date +%s) - start)) s"
python3 scripts/count_tests.py "$BUILD/meson-logs/testlog.json" tsan
