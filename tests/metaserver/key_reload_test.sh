#!/usr/bin/env bash
# key_reload_test.sh NINF_META NINFD - a key_file given to ninfd by SIGHUP
# reaches its metaserver session: ninf-meta requires a key, ninfd starts
# without one (its registration is refused), the key is added to ninfd's
# config file and SIGHUP sent, and ninfd registers within seconds, without
# a restart.
set -euo pipefail
meta=$1
ninfd=$2
dir=$(mktemp -d)
meta_pid=
ninfd_pid=
cleanup() {
  [[ -n "$ninfd_pid" ]] && kill "$ninfd_pid" 2>/dev/null && wait "$ninfd_pid" 2>/dev/null
  [[ -n "$meta_pid" ]] && kill "$meta_pid" 2>/dev/null && wait "$meta_pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  echo "--- ninfd:" >&2
  cat "$dir/ninfd.log" >&2
  echo "--- ninf-meta:" >&2
  cat "$dir/meta.log" >&2
  exit 1
}
wait_for() {  # FILE PATTERN SECONDS: until FILE has PATTERN
  for _ in $(seq $(($3 * 10))); do grep -q -- "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  fail "no '$2' in $1 within $3 s"
}

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/key"
chmod 600 "$dir/key"
"$meta" --port 0 --key-file "$dir/key" --ready-file "$dir/meta.ready" 2>"$dir/meta.log" &
meta_pid=$!
wait_for "$dir/meta.ready" '^[0-9]' 10
meta_port=$(cat "$dir/meta.ready")

printf 'metaserver = "127.0.0.1:%s"\nunix_socket = ""\nwarm_executables = 0\n' "$meta_port" \
  >"$dir/ninfd.toml"
"$ninfd" --port 0 --config "$dir/ninfd.toml" --ready-file "$dir/ninfd.ready" \
  2>"$dir/ninfd.log" &
ninfd_pid=$!
# Refused for its missing key: an authentication failure, not an absent
# metaserver (issue 31).
wait_for "$dir/ninfd.log" 'event=metaserver_auth_failed' 15
grep -q 'event=metaserver_registered' "$dir/ninfd.log" && fail "registered without a key"
grep -q 'event=metaserver_unreachable' "$dir/ninfd.log" && fail "an auth failure logged as unreachable"

printf 'key_file = "%s"\n' "$dir/key" >>"$dir/ninfd.toml"
kill -HUP "$ninfd_pid"
wait_for "$dir/ninfd.log" 'event=settings_reloaded applied="\?[a-z_ ]*key_file' 5
# At most one backoff period (5 s) after the reload: in practice at once.
wait_for "$dir/ninfd.log" 'event=metaserver_registered' 8

kill -0 "$ninfd_pid" 2>/dev/null || fail "ninfd died on SIGHUP"

# ninf-meta's own key file, rotated by SIGHUP (issue 43): the old key's tool
# is refused after it, the new one's served, and a tool without a key is told
# that ninf-meta (not "this server") wants one.
servers() { "$meta" --servers --port "$meta_port" "$@" 2>&1; }
out=$(servers) && fail "a keyless tool was served: $out"
[[ "$out" == *"ninf-meta requires authentication"* ]] || fail "refusal names no daemon: $out"
servers --key-file "$dir/key" >/dev/null || fail "the old key before the rotation: $(servers --key-file "$dir/key")"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/key2"
chmod 600 "$dir/key2"
cp "$dir/key" "$dir/key.old"
cp "$dir/key2" "$dir/key"
kill -HUP "$meta_pid"
wait_for "$dir/meta.log" 'event=reloaded key_file=' 5
out=$(servers --key-file "$dir/key.old") && fail "the old key still served after the rotation"
[[ "$out" == *"not one of ninf-meta's"* ]] || fail "old key's refusal: $out"
servers --key-file "$dir/key2" >/dev/null || fail "the new key: $(servers --key-file "$dir/key2")"
# A key file that cannot be read keeps the keys in use.
chmod 644 "$dir/key"
kill -HUP "$meta_pid"
wait_for "$dir/meta.log" 'event=reload_failed key_file=' 5
chmod 600 "$dir/key"
servers --key-file "$dir/key2" >/dev/null || fail "a failed reload dropped the keys"
kill -0 "$meta_pid" 2>/dev/null || fail "ninf-meta died on SIGHUP"
echo "ok"
