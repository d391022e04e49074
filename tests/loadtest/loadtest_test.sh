#!/usr/bin/env bash
# ninf-loadtest against a real ninfd serving the standard library, with tiny
# sizes: the tool runs, every call is a row, the summary agrees with the
# rows, utilization is a fraction, a failing server makes the exit status 1.
# Usage: loadtest_test.sh NINFD NINF_LOADTEST
set -euo pipefail
ninfd=$1
tool=$2
work=$(mktemp -d /tmp/ninf-loadtest-test.XXXXXX)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "loadtest_test: $*" >&2; exit 1; }

"$ninfd" --port 0 --ready-file "$work/ready" --log-level warn --unix-socket "" 2>"$work/ninfd.log" &
pid=$!
for _ in $(seq 100); do [ -s "$work/ready" ] && break; sleep 0.05; done
port=$(head -1 "$work/ready")
[ -n "$port" ] || fail "ninfd did not start"

# Linpack: 3 clients x 4 steps, every tick a call.
"$tool" --server "127.0.0.1:$port" --workload linpack --size 64 -c 3 --steps 4 -q \
  --csv "$work/calls.csv" --summary "$work/summary.csv" --table "$work/table.md" --label tiny \
  > "$work/out.txt" || fail "linpack run failed: $(cat "$work/out.txt")"
rows=$(($(wc -l < "$work/calls.csv") - 1))
[ "$rows" -eq 12 ] || fail "expected 12 call rows, got $rows"
[ "$(grep -c ',ok,' "$work/calls.csv")" -eq 12 ] || fail "not every call was ok"
calls=$(awk -F, 'NR == 2 { print $5 }' "$work/summary.csv")
[ "$calls" -eq 12 ] || fail "summary says $calls calls, the CSV has 12"
util=$(awk -F, 'NR == 2 { print $16 }' "$work/summary.csv")
awk -v u="$util" 'BEGIN { exit !(u >= 0 && u <= 1) }' || fail "utilization $util outside [0, 1]"
grep -q '^| tiny | linpack | 64 | 3 | 12 | 0 |' "$work/table.md" || fail "table row: $(cat "$work/table.md")"
grep -q 'tool CPU: collector' "$work/out.txt" || fail "no CPU line"
# Every row names the server and the threads it granted.
awk -F, -v s="127.0.0.1:$port" 'NR > 1 && ($13 != s || $14 < 1 || $3 != 64) { bad = 1 } END { exit bad }' \
  "$work/calls.csv" || fail "a row without its size, server or threads"

# Mixed sizes: every call is one of them, each size has its row in the
# per-size table, and the same clients and steps make the same calls again.
for run in 1 2; do
  "$tool" --server "127.0.0.1:$port" --workload linpack --size 16,48 --mix 1,1 -c 2 --steps 6 -q \
    --csv "$work/mix$run.csv" > "$work/mix$run.txt" || fail "mixed run failed: $(cat "$work/mix$run.txt")"
done
awk -F, 'NR > 1 && $3 != 16 && $3 != 48 { bad = 1 } END { exit bad }' "$work/mix1.csv" ||
  fail "a mixed call of another size"
grep -q '^| 16 | ' "$work/mix1.txt" && grep -q '^| 48 | ' "$work/mix1.txt" ||
  fail "no per-size rows: $(cat "$work/mix1.txt")"
grep -q '^| linpack | linpack | 16+48 | 2 | 12 | 0 |' "$work/mix1.txt" || fail "mixed row: $(cat "$work/mix1.txt")"
[ "$(tail -n +2 "$work/mix1.csv" | cut -d, -f1-3 | sort)" = "$(tail -n +2 "$work/mix2.csv" | cut -d, -f1-3 | sort)" ] ||
  fail "the same seeds made different calls"
if "$tool" --server "127.0.0.1:$port" --size 16,48 --mix 1 -c 1 --steps 1 -q > /dev/null 2>&1; then
  fail "a --mix without a weight per size was accepted"
fi

# linpack-x, the Ninf paper's call: A and b in, only x back, so a call moves
# about half of dgesv's bytes, and its answer is checked the same way.
"$tool" --server "127.0.0.1:$port" --workload linpack-x --size 64 -c 2 --steps 2 -q \
  --csv "$work/lx.csv" > "$work/lx.txt" || fail "linpack-x run failed: $(cat "$work/lx.txt")"
[ "$(grep -c ',ok,' "$work/lx.csv")" -eq 4 ] || fail "not every linpack-x call was ok: $(cat "$work/lx.csv")"
dgesv_bytes=$(awk -F, 'NR == 2 { print $9 }' "$work/calls.csv")
lx_bytes=$(awk -F, 'NR == 2 { print $9 }' "$work/lx.csv")
[ "$lx_bytes" -gt $((8 * 64 * 64)) ] && [ $((lx_bytes * 3)) -lt $((dgesv_bytes * 2)) ] ||
  fail "linpack-x moved $lx_bytes bytes, dgesv $dgesv_bytes: x alone should come back"
grep -q '^| linpack-x | linpack-x | 64 | 2 | 4 | 0 |' "$work/lx.txt" || fail "linpack-x row: $(cat "$work/lx.txt")"

# Random phases (the default): each client's first tick at its own offset in
# [0, s), not all at once. With these 8 seeds the latest offset is past 1 s
# of the 2 s interval, and no call starts before its tick.
"$tool" --server "127.0.0.1:$port" --size 16 -c 8 --interval 2 --steps 1 -q \
  --csv "$work/phase.csv" > /dev/null || fail "phase run failed"
awk -F, 'NR > 1 && $4 > last { last = $4 } END { exit !(last >= 1.0) }' "$work/phase.csv" ||
  fail "every first call started within 1 s of a 2 s interval: $(cut -d, -f1,4 "$work/phase.csv")"

# The server's measured CPU time from a control group. A v2 group's files in
# a directory of our own: its counter does not move, so cpu_util is 0 (and
# the booked utilization still comes from ninfd).
mkdir "$work/cg"
echo "usage_usec 5000000" > "$work/cg/cpu.stat"
echo "0-1" > "$work/cg/cpuset.cpus.effective"
"$tool" --server "127.0.0.1:$port" --size 32 -c 1 --steps 2 -q --server-cgroup "$work/cg" \
  --summary "$work/cg.csv" > "$work/cg.txt" || fail "cgroup run failed: $(cat "$work/cg.txt")"
col=$(head -1 "$work/cg.csv" | tr , '\n' | grep -nx cpu_util_mean | cut -d: -f1)
[ -n "$col" ] || fail "no cpu_util_mean column: $(head -1 "$work/cg.csv")"
[ "$(awk -F, -v c="$col" 'NR == 2 { print $c }' "$work/cg.csv")" = "0.0000" ] ||
  fail "cpu_util of a group that used nothing: $(cat "$work/cg.csv")"
# Not a group, and a v1 group whose cpuset cannot be found: clear errors.
if "$tool" --server "127.0.0.1:$port" --size 32 -c 1 --steps 1 -q --server-cgroup "$work/none" \
  > /dev/null 2> "$work/cgerr.txt"; then fail "a missing control group was accepted"; fi
grep -q "control group $work/none" "$work/cgerr.txt" || fail "error: $(cat "$work/cgerr.txt")"
mkdir "$work/v1"
echo 123456789 > "$work/v1/cpuacct.usage"
if "$tool" --server "127.0.0.1:$port" --size 32 -c 1 --steps 1 -q --server-cgroup "$work/v1" \
  > /dev/null 2> "$work/cgerr.txt"; then fail "a group without its CPU count was accepted"; fi
grep -q -- "--server-cpus" "$work/cgerr.txt" || fail "error does not name --server-cpus: $(cat "$work/cgerr.txt")"
"$tool" --server "127.0.0.1:$port" --size 32 -c 1 --steps 1 -q --server-cgroup "$work/v1" \
  --server-cpus 2 > /dev/null || fail "a v1 group with --server-cpus was refused"

# A real group (root with a writable cgroup tree): ninfd and the executables
# it starts run inside, and their CPU time is cpu_util.
cgroot=/sys/fs/cgroup
if [ "$(id -u)" -eq 0 ] && { [ -w "$cgroot" ] || [ -w "$cgroot/cpuacct" ]; }; then
  name=ninf-loadtest-test-$$
  if [ -f "$cgroot/cgroup.controllers" ]; then
    cgdirs="$cgroot/$name"
    cpuacct="$cgroot/$name"
  else
    cgdirs="$cgroot/cpuacct/$name $cgroot/cpuset/$name"
    cpuacct="$cgroot/cpuacct/$name"
  fi
  if mkdir $cgdirs 2>/dev/null; then
    if [ -d "$cgroot/cpuset/$name" ]; then
      cat "$cgroot/cpuset/cpuset.cpus" > "$cgroot/cpuset/$name/cpuset.cpus"
      cat "$cgroot/cpuset/cpuset.mems" > "$cgroot/cpuset/$name/cpuset.mems"
    fi
    procs=""
    for d in $cgdirs; do procs="$procs $d/cgroup.procs"; done
    # shellcheck disable=SC2016
    sh -c 'for p in $0; do echo $$ > "$p"; done; exec "$@"' "$procs" \
      "$ninfd" --port 0 --ready-file "$work/ready2" --log-level warn --unix-socket "" \
      2>"$work/ninfd2.log" &
    pid2=$!
    for _ in $(seq 100); do [ -s "$work/ready2" ] && break; sleep 0.05; done
    port2=$(head -1 "$work/ready2")
    ok=1
    "$tool" --server "127.0.0.1:$port2" --size 200 -c 2 --steps 6 -q --server-cgroup "$cpuacct" \
      --summary "$work/cg2.csv" > "$work/cg2.txt" || ok=0
    kill "$pid2" 2>/dev/null; wait "$pid2" 2>/dev/null || true
    # The group empties once ninfd's executables have ended too.
    for d in $cgdirs; do
      for _ in $(seq 50); do rmdir "$d" 2>/dev/null && break; sleep 0.1; done
    done
    [ "$ok" -eq 1 ] || fail "run in a real control group failed: $(cat "$work/cg2.txt")"
    awk -F, -v c="$col" 'NR == 2 { exit !($c > 0 && $c <= 1.05) }' "$work/cg2.csv" ||
      fail "cpu_util of a server that computed: $(cat "$work/cg2.csv")"
    echo "loadtest_test: real control group: cpu_util $(awk -F, -v c="$col" 'NR == 2 { print $c }' "$work/cg2.csv")"
  else
    echo "loadtest_test: no control group could be made here: the real-group check is skipped"
  fi
fi

# EP class S, answers checked against NAS; appended to the same summary.
"$tool" --server "127.0.0.1:$port" --workload ep --size 20 -c 2 --steps 1 -q \
  --summary "$work/summary.csv" > "$work/ep.txt" || fail "ep run failed: $(cat "$work/ep.txt")"
[ "$(wc -l < "$work/summary.csv")" -eq 3 ] || fail "summary should have a header and two runs"

# Stopped when told: calls that take minutes (EP, 2^30 pairs), a SIGTERM
# after a second. No more calls are issued, the calls under way get
# kStopGraceSeconds (5 s) and are then abandoned (ninfd cancels them), the
# tables cover what ended, marked, and the exit status is 128 + SIGTERM.
# Before, the run went on until its calls ended and said 100 %, exit 0.
# A second signal (a second after the first) abandons them at once.
for signals in 1 2; do
  "$tool" --server "127.0.0.1:$port" --workload ep --size 30 -c 2 --duration 600 -q \
    --table "$work/stop$signals.md" > "$work/stop$signals.txt" 2> "$work/stop$signals.err" &
  lt=$!
  sleep 1
  kill -TERM "$lt"
  t0=$(date +%s.%N)
  if [ "$signals" -eq 2 ]; then sleep 1; kill -INT "$lt"; fi
  rc=0
  wait "$lt" || rc=$?
  took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  [ "$rc" -eq 143 ] || fail "stopped run ($signals signal(s)): exit $rc, not 143: $(cat "$work/stop$signals.err")"
  if [ "$signals" -eq 1 ]; then
    awk -v t="$took" 'BEGIN { exit !(t >= 4.5 && t < 30) }' || fail "one signal: ended $took s after it, not after the 5 s grace"
  else
    awk -v t="$took" 'BEGIN { exit !(t < 4) }' || fail "two signals: ended $took s after the first, not at the second"
  fi
  grep -q "interrupted by Terminated at .* 2 call(s) under way were abandoned" "$work/stop$signals.err" ||
    fail "no interruption line: $(cat "$work/stop$signals.err")"
  grep -q '^| ep (interrupted) | ep | 30 | 2 | 0 |' "$work/stop$signals.md" ||
    fail "table not marked: $(cat "$work/stop$signals.md")"
done
for _ in $(seq 100); do
  running=$("$ninfd" --status --server "127.0.0.1:$port" | sed -n 's/^running://p')
  [ "$running" = 0 ] && break
  sleep 0.1
done
[ "$running" = 0 ] || fail "the abandoned calls still run on ninfd"

# A server that is not there: nothing runs, exit status 2, the message names
# it (tests/loadtest/engineer_test.sh has a server that dies during a run).
if "$tool" --server 127.0.0.1:1 --size 32 -c 1 --steps 2 -q --csv "$work/bad.csv" > /dev/null 2> "$work/bad.txt"; then
  fail "a run against a closed port started"
fi
grep -q "server 127.0.0.1:1 unreachable" "$work/bad.txt" || fail "no clear error: $(cat "$work/bad.txt")"
[ "$(wc -l < "$work/bad.csv")" -le 1 ] || fail "calls were made to a closed port: $(cat "$work/bad.csv")"

# Wrong usage is refused before anything runs.
if "$tool" --size 32 -c 1 --steps 1 -q > /dev/null 2>&1; then fail "ran without a server"; fi
echo "loadtest_test: ok"
