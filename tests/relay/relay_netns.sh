#!/usr/bin/env bash
# ninf-relay and ninfd --reverse across three network namespaces:
#
#   client ns (10.233.X.1) --veth-- relay ns (.2 | 10.234.X.2) --veth-- server ns (10.234.X.1)
#
# The client and server namespaces have no route to each other, and the
# server's drops every inbound TCP connection (nftables: SYN without ACK),
# so a call from the client reaches ninfd only through the relay, which
# ninfd dialed out to. Checked here: calls with arrays (echo of a pattern,
# 8 MiB) and null calls; ninfd listens on no TCP port (ss -ltn in its
# namespace); ninf-meta (in the relay's namespace) places a client's call
# on the reverse server in its relayed form; the client's key cannot
# register a server at the relay; a
# stopped ninfd and a stopped relay give clear errors within bounded time,
# and ninfd comes back by itself when the relay does; hostile input to the
# relay (garbage, an unknown server, a client that never sends its first
# frame, a bogus dial token) gets a clear error and leaves the relay with
# the descriptors it had; against a second, keyless relay on loopback,
# relay_limits.py plays the server by hand: a server that never dials back
# (its clients told, its tokens expired), max_pending_dials, max_servers,
# one name per control connection, a bridge both ways with a half-close,
# a token good once; a keyless relay refuses to listen beyond loopback.
# Everything the test started is killed (ip netns pids) before the
# namespaces go. Exit status 77 (Meson: skipped) where namespaces or
# nftables cannot be used.
#
#   relay_netns.sh NINF_RELAY NINFD RELAY_CLIENT REGISTRY NINF_META
set -uo pipefail
relay=$1 ninfd=$2 client=$3 registry=$4 meta=$5

tag=$$
ns_c=ninf-rc-$tag ns_r=ninf-rr-$tag ns_s=ninf-rs-$tag
sub=$(( tag % 250 + 1 ))
c_ip=10.233.$sub.1 rc_ip=10.233.$sub.2
s_ip=10.234.$sub.1 rs_ip=10.234.$sub.2
work=$(mktemp -d /tmp/ninf-relay-test.XXXXXX)

cleanup() {
  local n pids
  for n in "$ns_c" "$ns_r" "$ns_s"; do
    pids=$(ip netns pids "$n" 2>/dev/null)
    [[ -n "$pids" ]] && kill -KILL $pids 2>/dev/null
  done
  wait 2>/dev/null
  for n in "$ns_c" "$ns_r" "$ns_s"; do ip netns del "$n" 2>/dev/null; done
  [[ -n "${NINF_TEST_KEEP:-}" ]] && echo "relay_netns: logs kept in $work" || rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "relay_netns: FAIL: $*" >&2; for f in "$work"/*.log; do echo "--- $f" >&2; tail -20 "$f" >&2; done; exit 1; }
skip() { echo "relay_netns: skipped: $*" >&2; exit 77; }

[ "$(id -u)" -eq 0 ] || skip "not root (ip netns needs it)"
command -v ip >/dev/null || skip "no iproute2"
command -v nft >/dev/null || skip "no nft (Debian package nftables, scripts/deps.sh)"
ip netns add "$ns_c" 2>/dev/null || skip "network namespaces are not permitted here"
ip netns add "$ns_r" && ip netns add "$ns_s" || fail "cannot add namespaces"
for n in "$ns_c" "$ns_r" "$ns_s"; do ip -n "$n" link set lo up || fail "lo in $n"; done
ip -n "$ns_c" link add c0 type veth peer name rc0 netns "$ns_r" || fail "veth client"
ip -n "$ns_s" link add s0 type veth peer name rs0 netns "$ns_r" || fail "veth server"
ip -n "$ns_c" addr add "$c_ip/30" dev c0 && ip -n "$ns_c" link set c0 up &&
  ip -n "$ns_r" addr add "$rc_ip/30" dev rc0 && ip -n "$ns_r" link set rc0 up &&
  ip -n "$ns_r" addr add "$rs_ip/30" dev rs0 && ip -n "$ns_r" link set rs0 up &&
  ip -n "$ns_s" addr add "$s_ip/30" dev s0 && ip -n "$ns_s" link set s0 up || fail "addresses"
# The firewall: nothing may connect into the server's namespace.
ip netns exec "$ns_s" nft -f - <<'NFT' || skip "nftables does not work in a namespace here"
table inet ninf_firewall {
  chain input {
    type filter hook input priority 0; policy accept;
    tcp flags & (syn | ack) == syn drop
  }
}
NFT

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/relay.key"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/client.key"
chmod 600 "$work/relay.key" "$work/client.key"

in_c() { ip netns exec "$ns_c" "$@"; }
# wait_for FILE PATTERN SECONDS
wait_for() {
  for _ in $(seq $(( $3 * 20 ))); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  return 1
}
start_relay() {
  rm -f "$work/relay.ready"
  ip netns exec "$ns_r" "$relay" --listen 0.0.0.0 --port 3200 --key-file "$work/relay.key" \
    --max-pending-dials 4 --dial-timeout-seconds 2 --request-timeout-seconds 2 \
    --ready-file "$work/relay.ready" --log-level debug 2>>"$work/relay.log" &
  relay_pid=$!
  for _ in $(seq 100); do [ -s "$work/relay.ready" ] && return 0; sleep 0.05; done
  fail "ninf-relay did not start"
}
start_ninfd() {
  : >"$work/ninfd.log"
  ip netns exec "$ns_s" "$ninfd" --reverse --relay "$rs_ip:3200" --relay-name site-b \
    --metaserver "$rs_ip:3100" --advertise "$rc_ip:3200" \
    --relay-key-file "$work/relay.key" --key-file "$work/client.key" --allow-plaintext \
    --registry "$registry" --log-level debug 2>>"$work/ninfd.log" &
  ninfd_pid=$!
  wait_for "$work/ninfd.log" 'event=relay_state state=registered' 10 ||
    fail "ninfd did not register at the relay"
}
# call N [SECONDS]: one call from the client namespace, through the relay.
call() {
  in_c env NINF_SERVER="site-b@$rc_ip:3200" NINF_KEY_FILE="$work/client.key" \
    NINF_TRANSPORT=tcp timeout "${2:-30}" "$client" "$1"
}
relay_fds() { ls "/proc/$relay_pid/fd" | wc -l; }

ip netns exec "$ns_r" "$meta" --listen 0.0.0.0 --port 3100 --key-file "$work/client.key" --allow-plaintext \
  --ready-file "$work/meta.ready" 2>>"$work/meta.log" &
for _ in $(seq 100); do [ -s "$work/meta.ready" ] && break; sleep 0.05; done
[ -s "$work/meta.ready" ] || fail "ninf-meta did not start"
start_relay
start_ninfd

# --- ninfd is reachable only through the relay -------------------------------
listening=$(ip netns exec "$ns_s" ss -Hltn | wc -l)
[ "$listening" -eq 0 ] || fail "ninfd listens on TCP in its namespace: $(ip netns exec "$ns_s" ss -ltn)"
in_c timeout 3 bash -c "exec 3<>/dev/tcp/$s_ip/3000" 2>/dev/null &&
  fail "the client reached the server's namespace directly"
# Inbound connections are dropped even where a socket listens (the rule, not
# only the missing listener, keeps clients out).
ip netns exec "$ns_s" python3 -c 'import socket,time; s=socket.socket(); s.bind(("0.0.0.0",4999)); s.listen(); time.sleep(30)' &
probe_pid=$!
sleep 0.3
ip netns exec "$ns_r" timeout 3 bash -c "exec 3<>/dev/tcp/$s_ip/4999" 2>/dev/null &&
  fail "the server's namespace accepted an inbound connection despite the firewall"
kill "$probe_pid" 2>/dev/null

# --- real calls through the relay ---------------------------------------------
out=$(call 0) || fail "null call through the relay: $out"
out=$(call $(( 1 << 20 ))) || fail "echo of 8 MiB through the relay: $out"
for i in 1 2 3; do out=$(call 1000) || fail "echo call $i: $out"; done
grep -q 'event=bridged server=site-b' "$work/relay.log" || fail "the relay logged no bridge"
grep -q 'event=bridge_closed server=site-b to_server=[1-9]' "$work/relay.log" ||
  fail "the relay logged no bytes moved"
# ninfd saw the calls come from the relay.
grep -q 'peer=relay:' "$work/ninfd.log" || fail "ninfd did not log relayed peers"

# ninfd --status and --list reach a reverse server through the relay too.
status=$(in_c timeout 20 "$ninfd" --status --server "site-b@$rc_ip:3200" --key-file "$work/client.key" 2>&1) ||
  fail "ninfd --status through the relay: $status"
echo "$status" | grep -q '^pid:' || fail "no statistics through the relay: $status"
list=$(in_c timeout 20 "$ninfd" --list --server "site-b@$rc_ip:3200" --key-file "$work/client.key" 2>&1) ||
  fail "ninfd --list through the relay: $list"
echo "$list" | grep -q '^echo(' || fail "no echo in --list through the relay: $list"

# --- placed by ninf-meta: the client is sent the relayed address --------------
wait_for "$work/ninfd.log" 'event=metaserver_registered' 10 || fail "ninfd did not register with ninf-meta"
grep -q "advertise=\"\?site-b@$rc_ip:3200" "$work/ninfd.log" ||
  fail "ninfd does not advertise its relayed address"
bridges=$(grep -c 'event=bridged server=site-b' "$work/relay.log")
out=$(in_c env NINF_METASERVER="$rc_ip:3100" NINF_KEY_FILE="$work/client.key" NINF_TRANSPORT=tcp \
  timeout 30 "$client" 1000 2>&1) || fail "a call placed by ninf-meta: $out"
[ "$(grep -c 'event=bridged server=site-b' "$work/relay.log")" -gt "$bridges" ] ||
  fail "the placed call did not go through the relay"

# --- hostile input to the relay ----------------------------------------------
sleep 0.5
fds_before=$(relay_fds)
hostile_out=$(in_c python3 "$(dirname "$0")/relay_hostile.py" "$rc_ip" 3200 "$work/client.key" 2>&1) ||
  fail "hostile input: $hostile_out"
echo "$hostile_out"
out=$(call 1000) || fail "a call after the hostile input: $out"
sleep 2.5  # the slow client's request timeout (2 s) and the linger timers pass
fds_after=$(relay_fds)
[ "$fds_after" -le "$fds_before" ] ||
  fail "the relay holds $fds_after descriptors after the hostile input, $fds_before before"

# --- the relay's limits, tokens and bridge, playing the server by hand --------
# A second relay, keyless on loopback in the relay's namespace (a keyless
# relay lets anyone register: that is why it must stay on loopback).
ip netns exec "$ns_r" "$relay" --port 3201 --max-servers 3 --max-pending-dials 2 \
  --dial-timeout-seconds 1 --ready-file "$work/relay2.ready" 2>>"$work/relay2.log" &
for _ in $(seq 100); do [ -s "$work/relay2.ready" ] && break; sleep 0.05; done
[ -s "$work/relay2.ready" ] || fail "the second ninf-relay did not start"
limits_out=$(ip netns exec "$ns_r" timeout 60 python3 "$(dirname "$0")/relay_limits.py" 3201 2>&1) ||
  fail "limits: $limits_out"
echo "$limits_out"
# A keyless relay refuses to listen beyond loopback.
if ip netns exec "$ns_r" timeout 5 "$relay" --listen 0.0.0.0 --port 3202 2>"$work/relay3.log"; then
  fail "a keyless relay listened beyond loopback"
fi
grep -q "key" "$work/relay3.log" || fail "no clear refusal of a keyless relay: $(cat "$work/relay3.log")"

# --- a stopped ninfd: clear error, nothing hangs -----------------------------
kill -TERM "$ninfd_pid"; wait "$ninfd_pid" 2>/dev/null
wait_for "$work/relay.log" 'event=server_unregistered name=site-b' 5 ||
  fail "the relay did not notice ninfd leave"
start=$(date +%s)
out=$(call 1000 15 2>&1) && fail "a call to a stopped ninfd succeeded"
echo "$out" | grep -q "no server named 'site-b' is registered" ||
  fail "no clear error for a stopped ninfd: $out"
[ $(( $(date +%s) - start )) -le 5 ] || fail "the error for a stopped ninfd took too long"

# --- a stopped relay: clear error; ninfd reconnects when it is back -----------
start_ninfd
kill -TERM "$relay_pid"; wait "$relay_pid" 2>/dev/null
out=$(call 1000 15 2>&1) && fail "a call through a stopped relay succeeded"
echo "$out" | grep -qi "connect" || fail "no clear error for a stopped relay: $out"
wait_for "$work/ninfd.log" 'event=relay_state state=lost' 5 || fail "ninfd did not log the relay lost"
registered=$(grep -c 'event=relay_state state=registered' "$work/ninfd.log")
start_relay
for _ in $(seq 200); do  # ninfd's backoff is at most 5 s
  [ "$(grep -c 'event=relay_state state=registered' "$work/ninfd.log")" -gt "$registered" ] && break
  sleep 0.05
done
[ "$(grep -c 'event=relay_state state=registered' "$work/ninfd.log")" -gt "$registered" ] ||
  fail "ninfd did not register again when the relay came back"
for _ in $(seq 100); do out=$(call 1000 2>&1) && break; sleep 0.1; done
echo "$out" | grep -q '^ok$' || fail "no call after the relay came back: $out"

echo "relay_netns: ok (fds before hostile input $fds_before, after $fds_after)"
exit 0
