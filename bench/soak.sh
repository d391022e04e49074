#!/usr/bin/env bash
# bench/soak.sh - the soak and the under-attack run, against ninfd daemons
# started here, written up as bench/results/soak-DATE.md (raw log next to it).
#
#   bash bench/soak.sh BUILD_DIR [--out FILE] [--quick] [--threads N]
#       [--calls N] [--transfer-timeout S]
#
# (bench/lib.sh: `-h` lists the options with their defaults and --quick
# values; --out never writes over an existing file, and the default is a
# new bench/results/soak-DATE.md.)
#
# BUILD_DIR is an already built tree (this script builds nothing; it needs
# server/ninfd, bench/bench_soak, bench/attack and stubs/registry/echo).
#
# 1. Soak: a ninfd with --slots 2 --max-connections-per-client 256. The 64
#    client threads all come from 127.0.0.1 and each holds a handle's
#    connection plus a one-shot call's: up to 128 connections from one
#    address. ninfd's RSS, descriptors and children are read before the
#    run and 2 s after it.
#    1b. The same soak against a ninfd at its default settings (no flag at
#    all): issue 28's H3, where the old per-address cap of 64 and its
#    replacement of connections whose request had already arrived lost a
#    third of the calls.
# 2. Under attack: a fresh ninfd with --slots 2 --transfer-timeout-seconds S
#    (default 5; ninfd's own default is 60) and every other setting at its
#    default, max_connections_per_client (256) included. A good client
#    (bench_soak --mode good: sequential one-shot 8-byte echo calls) runs
#    alone (the quiet p99), then under each attack of bench/attack:
#      A1  1,000 slowloris sockets + 2 slot hogs (as many as the slots),
#          from 127.0.0.1, the good client's own address
#      A2  the same from 16 other addresses (127.0.0.2-17), where the
#          per-address cap does not apply
#      S1  the 1,000 slowloris sockets alone, from 127.0.0.1
#      S2  the 1,000 slowloris sockets alone, from 16 other addresses
#    Under hogs a call waits about S for its slot, so those runs stop after
#    a fixed time (--max-seconds) instead of a call count.
# 3. ninf-meta under attack: bench/meta_attack.sh (good clients' placements,
#    quiet and under the H6, H7, H9 attacks), written up next to this report
#    as FILE-meta.md and summed up here.
# Everything started here is stopped on exit, whatever way the script ends.
# shellcheck disable=SC2154  # options are set by bench_parse (bench/lib.sh)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_declare soak "A 64-client soak, then a good client quiet and under four attacks."
bench_option --threads N threads 64 4 "soak client threads"
bench_option --calls N calls 20480 64 "soak calls in all"
bench_option --transfer-timeout S transfer_timeout 5 1 "the attacked ninfd's transfer_timeout_seconds"
bench_option --mixed-threads N mixed_threads 1024 8 "threads of the mixed soak (one-shot, handle, async, two-phase)"
bench_parse "$@"
bench_need server/ninfd bench/bench_soak bench/attack stubs/registry/echo metaserver/ninf-meta bench/meta_attack
: >"$raw_log"
attack_pid=""

# The attacker, by its pid (the cleanup stops it too if the script ends first).
stop_attack() {
  [[ -z "$attack_pid" ]] || bench_stop "$attack_pid"
  attack_pid=""
}

log() { echo "$*" | tee -a "$raw_log" >&2; }

# start_soak_daemon [ninfd arguments]: start_daemon, and the raw log says so.
start_soak_daemon() {
  start_daemon -- "$@"
  log "daemon pid=$daemon_pid server=$NINF_SERVER args=\"$*\""
}

# sample NAME: ninfd's resident memory (now, and its peak so far), open
# descriptors and child processes (warm and handle executables), and the
# largest resident peak one echo executable reached over one call (ninfd
# --status), into rss_NAME, hwm_NAME, fds_NAME, children_NAME, exe_peak_NAME.
sample() {
  local rss hwm fds children exe_peak
  rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$daemon_pid/status")
  hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$daemon_pid/status")
  exe_peak=$("$build/server/ninfd" --status --server "$NINF_SERVER" 2>/dev/null |
    sed -n 's/^function\.echo\.peak_rss_bytes://p')
  exe_peak=$(( ${exe_peak:-0} / 1024 ))
  fds=$(find "/proc/$daemon_pid/fd" -mindepth 1 -maxdepth 1 | wc -l)
  children=$(pgrep -P "$daemon_pid" | wc -l || true)
  printf -v "rss_$1" '%s' "$rss"
  printf -v "hwm_$1" '%s' "$hwm"
  printf -v "fds_$1" '%s' "$fds"
  printf -v "children_$1" '%s' "$children"
  printf -v "exe_peak_$1" '%s' "$exe_peak"
  log "sample name=$1 rss_kb=$rss hwm_kb=$hwm fds=$fds children=$children exe_peak_kb=$exe_peak"
}

# The kernel's count of connections dropped because a listen backlog was
# full (system-wide: other programs on the machine add to it too).
listen_overflows() {
  awk '/^TcpExt:/ { if (!n++) { for (i = 2; i <= NF; i++) if ($i == "ListenOverflows") c = i }
                    else print $c }' /proc/net/netstat
}

# ninfd's CPU time so far (user + system), in seconds.
daemon_cpu() {
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' \
    "/proc/$daemon_pid/stat"
}

# stats NAME: one line of ninfd's own counters in the raw log. The query
# is a client like any other: under attack it may be refused, which is
# logged and not fatal.
stats() {
  local text
  text=$("$build/server/ninfd" --status --server "$NINF_SERVER" 2>&1 |
    grep -E '^(connections|connections_accepted|running|queued|jobs|completed|failed|cancelled|rejected|protocol_errors|warm_idle|persistent_executables):' |
    tr ':\n' '= ') || text="unavailable"
  log "status name=$1 $text"
}

# field LINE KEY: the value of key=value in a program's result line.
field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<" $1"; }

# run PROGRAM ARGS...: its result line, also kept in the raw log.
run() {
  echo "soak.sh: ${*#"$build/"}" >&2
  "$@" | tee -a "$raw_log"
}

# Waits until the daemon has no call running or queued and only the
# connection asking is open (10 s at most): the attack has drained.
settle() {
  for _ in $(seq 50); do
    local text
    text=$("$build/server/ninfd" --status --server "$NINF_SERVER" 2>/dev/null) || true
    grep -qx 'connections:1' <<<"$text" && grep -qx 'running:0' <<<"$text" &&
      grep -qx 'queued:0' <<<"$text" && return 0
    sleep 0.2
  done
  log "settle: the daemon did not drain within 10 s"
}

# good_run NAME [bench_soak options]: the good client, into good_NAME, with
# what the kernel dropped meanwhile (overflows_NAME) and ninfd's CPU
# seconds (cpu_NAME).
good_run() {
  local name=$1 overflows cpu delta_cpu delta_overflows
  shift
  overflows=$(listen_overflows)
  cpu=$(daemon_cpu)
  printf -v "good_$name" '%s' "$(run "$build/bench/bench_soak" --mode good --calls 500 "$@")"
  delta_overflows=$(($(listen_overflows) - overflows))
  delta_cpu=$(awk -v a="$(daemon_cpu)" -v b="$cpu" 'BEGIN { printf "%.2f", a - b }')
  printf -v "overflows_$name" '%s' "$delta_overflows"
  printf -v "cpu_$name" '%s' "$delta_cpu"
  log "good_run name=$name listen_overflows=$delta_overflows ninfd_cpu_s=$delta_cpu"
}

# attack_run NAME MAX_SECONDS ATTACK_ARGS...: the good client under one attack.
attack_run() {
  local name=$1 max_seconds=$2
  shift 2
  rm -f "$work/attack_ready"
  "$build/bench/attack" --ready-file "$work/attack_ready" "$@" >>"$work/attack_$name.log" 2>&1 &
  attack_pid=$!
  bench_track "$attack_pid"
  wait_ready "$work/attack_ready" "$attack_pid" "attack $name" 30
  sleep 1  # the hogs' calls are admitted, the slowloris sockets trickling
  log "attack name=$name args=\"$*\""
  stats "${name}_before"
  sample "$name"
  good_run "$name" --max-seconds "$max_seconds"
  stats "${name}_after"
  stop_attack
  cat "$work/attack_$name.log" >>"$raw_log"
  settle
}

# Phase 1: the soak.
start_soak_daemon --slots 2 --max-connections-per-client 256
sample soak_before
soak_cpu=$(daemon_cpu)
soak_line=$(run "$build/bench/bench_soak" --threads "$threads" --calls "$calls")
soak_cpu=$(awk -v a="$(daemon_cpu)" -v b="$soak_cpu" 'BEGIN { printf "%.2f", a - b }')
log "soak ninfd_cpu_s=$soak_cpu"
sleep 2
sample soak_after
stats soak_after
stop_daemon

# Phase 1b: the soak at the default settings.
start_soak_daemon
sample soak_default_before
soak_default_cpu=$(daemon_cpu)
soak_default_line=$(run "$build/bench/bench_soak" --threads "$threads" --calls "$calls")
soak_default_cpu=$(awk -v a="$(daemon_cpu)" -v b="$soak_default_cpu" 'BEGIN { printf "%.2f", a - b }')
log "soak_default ninfd_cpu_s=$soak_default_cpu"
sleep 2
sample soak_default_after
stats soak_default_after
stop_daemon
grep -E 'event=(connection_replaced|connection_refused|log_suppressed)' "$work/ninfd.log" |
  sed 's/^/ninfd (defaults): /' | tail -n 20 >>"$raw_log" || true

# Phase 1c: many more threads, each cycling through every kind of call:
# one-shot, handle, async and two-phase (a ticket, the buffer cleared, the
# collect). Each thread holds a handle's connection beside its other calls',
# so the connection bounds are raised (and the client's descriptors).
start_soak_daemon --max-connections 8192 --max-connections-per-client 8192
sample soak_mixed_before
soak_mixed_cpu=$(daemon_cpu)
soak_mixed_line=$(run prlimit --nofile=16384:16384 "$build/bench/bench_soak" --threads "$mixed_threads" \
  --calls "$calls" --mix)
soak_mixed_cpu=$(awk -v a="$(daemon_cpu)" -v b="$soak_mixed_cpu" 'BEGIN { printf "%.2f", a - b }')
log "soak_mixed ninfd_cpu_s=$soak_mixed_cpu"
sleep 2
sample soak_mixed_after
stats soak_mixed_after
stop_daemon

# Phase 2: the good client, quiet and under attack.
start_soak_daemon --slots 2 --transfer-timeout-seconds "$transfer_timeout"
good_run quiet
sample attack_before
attack_seconds=$((4 * transfer_timeout))
attack_run A1 "$attack_seconds" --slowloris 1000 --hogs 2
attack_run A2 "$attack_seconds" --slowloris 1000 --hogs 2 --sources 16
attack_run S1 60 --slowloris 1000 --hogs 0
attack_run S2 60 --slowloris 1000 --hogs 0 --sources 16
sleep 2
sample attack_after
stats attack_after
stop_daemon
grep -E 'event=(connection_replaced|connection_refused|log_suppressed)' "$work/ninfd.log" |
  sed 's/^/ninfd: /' | tail -n 20 >>"$raw_log" || true

# Phase 3: ninf-meta under attack, in its own report next to this one.
meta_out="${out%.md}-meta.md"
meta_args=()
[[ $quick -eq 1 ]] && meta_args+=(--quick)
bash "$here/meta_attack.sh" "$build" --out "$meta_out" "${meta_args[@]}" >>"$raw_log" 2>&1 ||
  echo "soak.sh: bench/meta_attack.sh failed (its output is in $raw_log)" >&2

# ---- the report ----------------------------------------------------------
ms() { printf '%.1f' "$1"; }
mib() { awk -v kb="$1" 'BEGIN { printf "%.1f", kb / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
verdict() { awk -v ok="$1" 'BEGIN { print (ok ? "met" : "**not met**") }'; }

quiet_p99=$(field "$good_quiet" p99_ms)
good_row() {  # good_row NAME LABEL
  local line_var="good_$1" overflows_var="overflows_$1" cpu_var="cpu_$1" p99 ratio_text="-"
  local line=${!line_var}
  p99=$(field "$line" p99_ms)
  [[ "$1" == quiet ]] || ratio_text="$(ratio "$p99" "$quiet_p99") x"
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$2" \
    "$(field "$line" calls)" "$(field "$line" seconds)" "$(ms "$(field "$line" p50_ms)")" \
    "$(ms "$p99")" "$(ms "$(field "$line" max_ms)")" "$(field "$line" lost)" \
    "$(field "$line" wrong)" "$ratio_text" "${!overflows_var}" "${!cpu_var}"
}
attack_ok() {  # attack_ok LINE: p99 within 2 x quiet and nothing lost or wrong
  awk -v p="$(field "$1" p99_ms)" -v q="$quiet_p99" -v l="$(field "$1" lost)" \
    -v w="$(field "$1" wrong)" 'BEGIN { print (p <= 2 * q && l == 0 && w == 0) }'
}

# soak_table NAME: the table of one soak phase, from NAME_line, NAME_cpu,
# NAME_lost, NAME_wrong and the samples rss_/fds_/children_NAME_before/after.
soak_table() {
  local line_var="$1_line" cpu_var="$1_cpu" lost_var="$1_lost" wrong_var="$1_wrong"
  local line=${!line_var} rss_b="rss_$1_before" rss_a="rss_$1_after" fds_b="fds_$1_before"
  local fds_a="fds_$1_after" ch_b="children_$1_before" ch_a="children_$1_after"
  local hwm_a="hwm_$1_after" exe_a="exe_peak_$1_after"
  echo "| what | value |"
  echo "|---|---|"
  echo "| calls | $(field "$line" calls) in $(field "$line" seconds) s |"
  echo "| calls/s | $(field "$line" calls_per_s) ($(field "$line" mb_per_s) MB/s each way) |"
  echo "| latency p50 / p99 / max | $(ms "$(field "$line" p50_ms)") / $(ms "$(field "$line" p99_ms)") / $(ms "$(field "$line" max_ms)") ms |"
  echo "| p99 one-shot / handle | $(ms "$(field "$line" oneshot_p99_ms)") / $(ms "$(field "$line" handle_p99_ms)") ms |"
  echo "| ninfd CPU (user + system) | ${!cpu_var} s |"
  echo "| lost (error returned) | ${!lost_var} |"
  echo "| wrong (result differs) | ${!wrong_var} |"
  echo "| ninfd RSS before / after / peak | $(mib "${!rss_b}") / $(mib "${!rss_a}") / $(mib "${!hwm_a}") MiB |"
  echo "| echo executable's largest peak over one call | $(mib "${!exe_a}") MiB |"
  echo "| ninfd open fds before / after | ${!fds_b} / ${!fds_a} |"
  echo "| ninfd children before / after | ${!ch_b} / ${!ch_a} |"
}

soak_lost=$(field "$soak_line" lost)
soak_wrong=$(field "$soak_line" wrong)
soak_default_lost=$(field "$soak_default_line" lost)
soak_default_wrong=$(field "$soak_default_line" wrong)
soak_mixed_lost=$(field "$soak_mixed_line" lost)
soak_mixed_wrong=$(field "$soak_mixed_line" wrong)
dirty=""
git -C "$here/.." diff --quiet HEAD 2>/dev/null || dirty=" (working tree with uncommitted changes)"
{
  echo "# Soak and under-attack run"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)," \
    "$(nproc) cores, Linux $(uname -r), source $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)$dirty."
  echo "Written by \`bench/soak.sh\`; raw log \`$(basename "$raw_log")\`."
  echo
  echo "## Soak"
  echo
  echo "ninfd \`--slots 2 --max-connections-per-client 256\`; $threads client threads in one process on"
  echo "127.0.0.1, each alternating one-shot \`Ninf_call(\"echo\")\` and \`grpc_call\` on the handle it"
  echo "keeps; sizes cycle 8 B, 64 B, 1 KiB, 16 KiB, 256 KiB, 1 MiB (1 MiB is 1 call in 16); every"
  echo "returned byte is checked against a pattern of (thread, call, word)."
  echo
  soak_table soak
  echo
  echo "## Soak at the default settings"
  echo
  echo "The same $threads threads and $(field "$soak_default_line" calls) calls against a fresh ninfd started with no"
  echo "setting at all (\`max_connections_per_client\` 256, slots = cores)."
  echo
  soak_table soak_default
  echo
  echo "## Mixed soak: $mixed_threads threads, every kind of call"
  echo
  echo "A fresh ninfd \`--max-connections 8192 --max-connections-per-client 8192\` (each thread holds its"
  echo "handle's connection beside its other calls), every other setting default (\`max_idle_handles\`"
  echo "64, slots = cores). $mixed_threads threads share $(field "$soak_mixed_line" calls) calls, each thread cycling through"
  echo "one-shot \`Ninf_call\`, \`grpc_call\` on its handle, \`Ninf_call_async\` + \`Ninf_wait\` and a"
  echo "two-phase \`Ninf_call_submit\` + \`Ninf_call_collect\` (the buffer cleared between them); sizes"
  echo "and checks as above. p99 async / two-phase:"
  echo "$(ms "$(field "$soak_mixed_line" async_p99_ms)") / $(ms "$(field "$soak_mixed_line" two_phase_p99_ms)") ms."
  echo
  soak_table soak_mixed
  echo
  echo "## A good client, quiet and under attack"
  echo
  echo "A fresh ninfd \`--slots 2 --transfer-timeout-seconds $transfer_timeout\`, every other setting default"
  echo "(\`max_connections_per_client\` 256, \`request_timeout_seconds\` 10). The good client makes"
  echo "sequential one-shot 8-byte \`echo\` calls from 127.0.0.1: 500, or as many as fit in"
  echo "$attack_seconds s (A1, A2) / 60 s (S1, S2). Slowloris: 1,000 sockets sending one byte of a CALL"
  echo "frame per second, reopened when closed; hogs: a CALL of \`echo\` and then silence, reopened at"
  echo "once when ninfd ends them."
  echo
  echo "| run | good calls | s | p50 ms | p99 ms | max ms | lost | wrong | p99 / quiet p99 | listen overflows | ninfd CPU s |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  good_row quiet "quiet"
  good_row A1 "A1: 1,000 slowloris + 2 hogs, from 127.0.0.1"
  good_row A2 "A2: 1,000 slowloris + 2 hogs, from 127.0.0.2-17"
  good_row S1 "S1: 1,000 slowloris alone, from 127.0.0.1"
  good_row S2 "S2: 1,000 slowloris alone, from 127.0.0.2-17"
  echo
  echo "Listen overflows: connections the kernel dropped while the good client ran because a"
  echo "listen backlog was full (ninfd asks for 4096, capped by net.core.somaxconn), from \`/proc/net/netstat\` (system-wide); a"
  echo "dropped SYN is sent again after 1 s. ninfd CPU s: the daemon's user + system time over the"
  echo "same span (executables not included)."
  echo
  echo "ninfd during A1 / A2 / S1 / S2: RSS $(mib "$rss_A1") / $(mib "$rss_A2") / $(mib "$rss_S1") / $(mib "$rss_S2") MiB,"
  echo "open fds $fds_A1 / $fds_A2 / $fds_S1 / $fds_S2; before the attacks $(mib "$rss_attack_before") MiB and $fds_attack_before fds,"
  echo "2 s after the last $(mib "$rss_attack_after") MiB and $fds_attack_after fds."
  echo
  echo "## ninf-meta under attack"
  echo
  echo "\`bench/meta_attack.sh\` in the same run, written up in \`$(basename "$meta_out")\`:"
  echo
  grep -E '^- round [0-9]+:' "$meta_out" 2>/dev/null || echo "- (no result: see the raw log)"
  echo
  echo "## Targets"
  echo
  echo "| target | measured | |"
  echo "|---|---|---|"
  echo "| soak: 0 lost, 0 wrong | $soak_lost lost, $soak_wrong wrong | $(verdict "$((soak_lost + soak_wrong == 0))") |"
  echo "| soak at defaults: 0 lost, 0 wrong | $soak_default_lost lost, $soak_default_wrong wrong | $(verdict "$((soak_default_lost + soak_default_wrong == 0))") |"
  echo "| mixed soak ($mixed_threads threads): 0 lost, 0 wrong | $soak_mixed_lost lost, $soak_mixed_wrong wrong | $(verdict "$((soak_mixed_lost + soak_mixed_wrong == 0))") |"
  for name in A1 A2 S1 S2; do
    line_var="good_$name"
    line=${!line_var}
    echo "| $name: p99 <= 2 x quiet p99, 0 lost or wrong | $(ratio "$(field "$line" p99_ms)" "$quiet_p99") x, $(field "$line" lost) lost, $(field "$line" wrong) wrong | $(verdict "$(attack_ok "$line")") |"
  done
} >"$out"
echo "soak.sh: wrote $out (raw log $raw_log)" >&2
