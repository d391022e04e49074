#!/usr/bin/env bash
# ninf-loadtest as an outside performance engineer tried it (issue 30):
# one key setting for the calls and the sampling, a clear warning when a
# server cannot be sampled, a server that dies during a run (backed off,
# reported by name), --fail-fast, progress with percent, the per-second
# series, and the totals across servers. Real ninfd on loopback, tiny sizes.
# Usage: engineer_test.sh NINFD NINF_LOADTEST
set -euo pipefail
ninfd=$1
tool=$2
work=$(mktemp -d /tmp/ninf-loadtest-engineer.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "engineer_test: $*" >&2; exit 1; }

# start NAME [ninfd options...]: a ninfd on a free port; its port in $port.
start() {
  local name=$1
  shift
  "$ninfd" --port 0 --ready-file "$work/$name.ready" --log-level warn --unix-socket "" "$@" \
    2>"$work/$name.log" &
  pids+=($!)
  last_pid=$!
  for _ in $(seq 100); do [ -s "$work/$name.ready" ] && break; sleep 0.05; done
  port=$(head -1 "$work/$name.ready")
  [ -n "$port" ] || fail "ninfd $name did not start: $(cat "$work/$name.log")"
}
col() { head -1 "$1" | tr , '\n' | grep -nx "$2" | cut -d: -f1; }

# --- One key setting. A keyed server: --key-file alone serves the calls too,
# NINF_KEY_FILE alone serves the sampling too.
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/key"
chmod 600 "$work/key"
start keyed --key-file "$work/key"
keyed=127.0.0.1:$port
"$tool" --server "$keyed" --size 32 -c 2 --steps 3 --key-file "$work/key" -q \
  --summary "$work/key1.csv" > "$work/key1.txt" 2> "$work/key1.err" ||
  fail "calls with --key-file alone failed: $(cat "$work/key1.err")"
grep -q "cannot sample" "$work/key1.err" && fail "sampling failed with --key-file: $(cat "$work/key1.err")"
NINF_KEY_FILE="$work/key" "$tool" --server "$keyed" --size 32 -c 1 --steps 2 -q \
  > "$work/key2.txt" 2> "$work/key2.err" || fail "calls with NINF_KEY_FILE failed: $(cat "$work/key2.err")"
grep -q "cannot sample" "$work/key2.err" && fail "sampling ignored NINF_KEY_FILE: $(cat "$work/key2.err")"
grep -q '^| linpack | linpack | 32 | 1 | 2 | 0 | .* | - | [0-9.]* | [0-9.]* |$' "$work/key2.txt" ||
  fail "sampled figures missing: $(cat "$work/key2.txt")"

# No key: the server answers (so the run starts), every call is refused, and
# the sampling failure is said once, naming the fix.
if env -u NINF_KEY_FILE "$tool" --server "$keyed" --size 32 -c 1 --steps 3 --sample-ms 50 \
  --interval 0.2 -q > "$work/key3.txt" 2> "$work/key3.err"; then
  fail "calls without the key succeeded"
fi
[ "$(grep -c "cannot sample server $keyed" "$work/key3.err")" -eq 1 ] ||
  fail "sampling failure not warned exactly once: $(cat "$work/key3.err")"
grep "cannot sample server $keyed" "$work/key3.err" | grep -q -- "--key-file" ||
  fail "the warning does not name --key-file: $(cat "$work/key3.err")"

# --fail-fast: the first failed call (no key) stops a run of 2 x 2000 calls,
# its error printed, exit status 1.
if env -u NINF_KEY_FILE "$tool" --server "$keyed" --size 16 -c 2 --steps 2000 --fail-fast -q \
  --csv "$work/ff.csv" > "$work/ff.txt" 2> "$work/ff.err"; then
  fail "--fail-fast run succeeded"
fi
grep -q -- "--fail-fast: client" "$work/ff.err" || fail "no first failure printed: $(cat "$work/ff.err")"
rows=$(($(wc -l < "$work/ff.csv") - 1))
[ "$rows" -ge 1 ] && [ "$rows" -lt 4000 ] || fail "--fail-fast ran $rows calls"

# --- Two servers: progress with percent, the per-second series, the totals.
start a
a=127.0.0.1:$port
start b
b=127.0.0.1:$port
b_pid=$last_pid
"$tool" --server "$a" --server "$b" --size 48 -c 4 --interval 0.1 --duration 2 \
  --series "$work/series.csv" --summary "$work/sum.csv" --csv "$work/calls.csv" \
  > "$work/two.txt" 2> "$work/two.err" || fail "two-server run failed: $(cat "$work/two.err")"
grep -q '^loadtest: 100%' "$work/two.err" || fail "no final progress line: $(cat "$work/two.err")"
grep -q "^| $a | " "$work/two.txt" && grep -q "^| $b | " "$work/two.txt" && grep -q '^| all | ' "$work/two.txt" ||
  fail "no per-server table with its totals row: $(cat "$work/two.txt")"
calls=$(($(wc -l < "$work/calls.csv") - 1))
[ "$(head -1 "$work/series.csv")" = "t_s,server,running,queued,utilization,cpu_util,calls,failed,gflops,mbs" ] ||
  fail "series header: $(head -1 "$work/series.csv")"
# Every call ends in one second of the series, at its server and in "all".
[ "$(awk -F, '$2 == "all" { n += $7 } END { print n }' "$work/series.csv")" -eq "$calls" ] ||
  fail "series calls differ from the CSV's $calls"
[ "$(awk -F, -v s="$a" '$2 == s { n += $7 } END { print n }' "$work/series.csv")" -eq \
  "$(awk -F, -v s="$a" 'NR > 1 && $13 == s' "$work/calls.csv" | wc -l)" ] || fail "series calls of $a"
awk -F, 'NR > 1 && $2 == "all" && $5 != "" { u = 1 } END { exit !u }' "$work/series.csv" ||
  fail "no sampled utilization in the series"
for name in throughput_max throughput_min aggregate_mbs utilization_total jobs_total unreachable; do
  [ -n "$(col "$work/sum.csv" "$name")" ] || fail "summary has no $name: $(head -1 "$work/sum.csv")"
done
awk -F, -v mx="$(col "$work/sum.csv" throughput_max)" -v mn="$(col "$work/sum.csv" throughput_min)" \
  -v mean="$(col "$work/sum.csv" throughput_mean)" \
  'NR == 2 { exit !($mx >= $mean && $mean >= $mn && $mn > 0) }' "$work/sum.csv" ||
  fail "throughput max / mean / min out of order: $(cat "$work/sum.csv")"

# --- A server that dies during a closed-loop run: its clients back off (not
# thousands of failed calls a second), the failures are "unreachable" and
# the server is named.
# The server is killed once it has completed calls of this run (so the run
# has started however slow the machine), seconds before its end.
completed() { "$ninfd" --status --server "$b" 2>/dev/null | awk -F: '$1 == "completed" { print $2 }'; }
before=$(completed)
"$tool" --server "$b" --size 16 -c 2 --duration 7 -q --csv "$work/dead.csv" \
  > "$work/dead.txt" 2> "$work/dead.err" &
tool_pid=$!
for _ in $(seq 400); do
  [ "$(completed)" -ge $((before + 5)) ] && break
  sleep 0.01
done
kill "$b_pid"
if wait "$tool_pid"; then fail "a run whose server died succeeded"; fi
unreachable=$(grep -c ',unreachable,' "$work/dead.csv" || true)
[ "$unreachable" -ge 1 ] || fail "no call recorded as unreachable: $(tail -3 "$work/dead.csv")"
# 2 clients backing off 0.1, 0.2, 0.4, 0.8, 1, 1 ... s for at most 4 s: about 7 each
# (without the back-off: thousands).
[ "$unreachable" -le 40 ] || fail "$unreachable unreachable calls: no back-off"
grep -q "server $b unreachable" "$work/dead.err" || fail "the dead server is not named: $(cat "$work/dead.err")"
echo "engineer_test: ok (--fail-fast stopped after $rows calls; $unreachable unreachable calls after the server died)"
