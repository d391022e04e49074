#!/usr/bin/env bash
# Builds the project with AddressSanitizer (leaks included) and
# UndefinedBehaviorSanitizer into build-asan, with the usual compilers, and
# runs the test suites there (the format check, suite 'style', is left out:
# it does not depend on the build). Every program the tests start, ninfd and
# the executables it forks included, inherits the options below, so a report
# in any of them fails its test. Prints "sanitizers: N passed, N failed"
# counted from Meson's test log; exit status 0 only when nothing failed.
#
#   bash scripts/sanitize.sh [meson test arguments, e.g. --suite server]
#
# NINF_JOBS sets the build's parallelism (default: every core).
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${NINF_ASAN_BUILD:-build-asan}
fail() {
  echo "sanitizers: 0 passed, 1 failed ($1)"
  exit 1
}

bash scripts/deps.sh || fail "deps"
start=$(date +%s)
if [ ! -f "$BUILD/build.ninja" ]; then
  # -O1 and line tables only (-g1) instead of -O2 -g: the same checks (the
  # instrumentation does not depend on them, and assertions stay on), reports
  # still name files and lines, and the build takes about half the time
  # (the ASan+UBSan build was most of CI's time; docs/fuzzing.md). A unity
  # build (12 sources per translation unit) compiles the inline code of the
  # headers (protobuf, spdlog, fmt, libuv's wrappers), instrumented, once
  # per 12 files instead of once per file: 557 s instead of 922 s on 2
  # cores. The release build (scripts/test.sh) compiles every file alone,
  # so an include a file forgets still fails there.
  meson setup "$BUILD" -Db_sanitize=address,undefined -Db_lundef=false \
    -Doptimization=1 -Ddebug=false -Dc_args=-g1 -Dcpp_args=-g1 \
    -Dunity=on -Dunity_size=12 || fail "meson setup"
fi
# Only what the tests need (their programs and `depends`): no benchmarks,
# no examples the tests do not run.
nice -n 10 ninja -C "$BUILD" -j "${NINF_JOBS:-$(nproc)}" meson-test-prereq || fail "build"
echo "sanitize: build took $(($(date +%s) - start)) s"

# verify_asan_link_order=0: the programs a test builds outside the tree with
# tools/ninfcc and tools/ninffc are not instrumented, yet load the
# instrumented libninf, which brings the ASan runtime in after libc.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1:verify_asan_link_order=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
rm -f "$BUILD/meson-logs/testlog.json"
start=$(date +%s)
# The sanitizers make every program slower: the tests get three times their
# usual time limit.
meson test -C "$BUILD" --no-rebuild --num-processes 2 --print-errorlogs --no-suite style \
  --timeout-multiplier "${NINF_TIMEOUT_MULTIPLIER:-3}" "$@"
echo "sanitize: tests took $(($(date +%s) - start)) s"
python3 scripts/count_tests.py "$BUILD/meson-logs/testlog.json" sanitizers
