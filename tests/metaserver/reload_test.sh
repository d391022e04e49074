#!/usr/bin/env bash
# reload_test.sh NINF_META - SIGHUP makes ninf-meta read its settings again:
# log_level applies at once, another changed key is reported as needing a
# restart, a broken file is reported with its line and changes nothing, and
# the daemon keeps running through all three.
set -euo pipefail
meta=$1
dir=$(mktemp -d)
pid=
trap '[[ -n "$pid" ]] && kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$dir/log" >&2; exit 1; }
wait_log() {  # PATTERN: until the log has it (5 s)
  for _ in $(seq 50); do grep -q -- "$1" "$dir/log" && return 0; sleep 0.1; done
  fail "no '$1' in the log"
}

printf 'log_level = "info"\n' >"$dir/meta.toml"
"$meta" --port 0 --config "$dir/meta.toml" --ready-file "$dir/ready" 2>"$dir/log" &
pid=$!
wait_log 'event=listening'

printf 'log_level = "debug"\nretries = 3\n' >"$dir/meta.toml"
kill -HUP "$pid"
wait_log 'event=settings_reloaded applied="\?log_level'
wait_log 'event=settings_need_restart keys="\?retries'

printf 'log_level = "debug"\nretries = "x"\n' >"$dir/meta.toml"
kill -HUP "$pid"
wait_log "event=reload_failed settings=config error=\"$dir/meta.toml:2: retries = 'x' is not an integer"

kill -0 "$pid" 2>/dev/null || fail "ninf-meta died on SIGHUP"
kill -TERM "$pid"
wait "$pid" || fail "ninf-meta exited with status $?"
pid=
echo "ok"
