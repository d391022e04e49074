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

# EP class S, answers checked against NAS; appended to the same summary.
"$tool" --server "127.0.0.1:$port" --workload ep --size 20 -c 2 --steps 1 -q \
  --summary "$work/summary.csv" > "$work/ep.txt" || fail "ep run failed: $(cat "$work/ep.txt")"
[ "$(wc -l < "$work/summary.csv")" -eq 3 ] || fail "summary should have a header and two runs"

# A server that is not there: every call fails, exit status 1, the rows say why.
if "$tool" --server 127.0.0.1:1 --size 32 -c 1 --steps 2 -q --csv "$work/bad.csv" > /dev/null 2>&1; then
  fail "calls to a closed port did not fail the run"
fi
[ "$(grep -c ',error,' "$work/bad.csv")" -eq 2 ] || fail "failed calls not recorded: $(cat "$work/bad.csv")"

# Wrong usage is refused before anything runs.
if "$tool" --size 32 -c 1 --steps 1 -q > /dev/null 2>&1; then fail "ran without a server"; fi
echo "loadtest_test: ok"
