#!/usr/bin/env bash
# ninf-relay and a reverse ninfd on 127.0.0.1, no root and no namespaces:
# a real null call and a real echo call through the relay. The shell that
# starts the relay also holds a ninfd's NINF_READY_FILE and NINF_PORT (one
# EnvironmentFile for both daemons): the relay must not read them (issue 42:
# it wrote its port into ninfd's ready file) and must say so once in its log.
#
#   relay_loopback.sh NINF_RELAY NINFD RELAY_CLIENT REGISTRY
set -uo pipefail
relay=$1 ninfd=$2 client=$3 registry=$4

work=$(mktemp -d /tmp/ninf-relay-lo.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  [[ -n "${NINF_TEST_KEEP:-}" ]] && echo "relay_loopback: logs kept in $work" || rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "relay_loopback: FAIL: $*" >&2; for f in "$work"/*.log; do echo "--- $f" >&2; tail -20 "$f" >&2; done; exit 1; }
wait_for() {
  for _ in $(seq $(( $3 * 20 ))); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  return 1
}

# ninfd's variables, as a shared shell would have them, and none of the
# relay's own: it listens on a free port, which its log names.
NINF_READY_FILE="$work/ninfd.ready" NINF_PORT=1 \
  "$relay" --port 0 --log-level debug 2>>"$work/relay.log" &
pids+=($!)
wait_for "$work/relay.log" 'event=listening' 5 || fail "ninf-relay did not start"
port=$(sed -n 's/.*event=listening .* port=\([0-9]*\) .*/\1/p' "$work/relay.log" | head -n1)
[ -n "$port" ] || fail "no port in the relay's log"
sleep 0.2
[ -e "$work/ninfd.ready" ] && fail "ninf-relay wrote into ninfd's NINF_READY_FILE"
grep -q 'event=variable_ignored variable=NINF_READY_FILE use=NINF_RELAY_READY_FILE' "$work/relay.log" ||
  fail "no warning of NINF_READY_FILE"
grep -q 'event=variable_ignored variable=NINF_PORT' "$work/relay.log" &&
  fail "a warning of NINF_PORT although --port gave the value"

"$ninfd" --reverse --relay "127.0.0.1:$port" --relay-name lo --registry "$registry" \
  --log-level debug 2>>"$work/ninfd.log" &
pids+=($!)
wait_for "$work/ninfd.log" 'event=relay_state state=registered' 10 ||
  fail "ninfd did not register at the relay"
wait_for "$work/relay.log" 'event=server_registered name=lo' 5 || fail "the relay logged no registration"

for n in 0 1000 $(( 1 << 17 )); do
  out=$(NINF_SERVER="lo@127.0.0.1:$port" NINF_TRANSPORT=tcp timeout 30 "$client" "$n" 2>&1) ||
    fail "call of $n through the relay: $out"
  [ "$out" = ok ] || fail "call of $n: $out"
done
grep -q 'event=bridged server=lo' "$work/relay.log" || fail "the relay logged no bridge"

# A TLS client told by the relay that its server is not there hears the
# relay's refusal, not "the server does not speak TLS" (issue 43).
bash "$(dirname "$0")/../../scripts/site_ca.sh" "$work" ca >/dev/null 2>&1 || fail "no site CA"
out=$(NINF_SERVER="nobody@127.0.0.1:$port" NINF_TRANSPORT=tcp NINF_TLS_CA="$work/ca.pem" \
  timeout 30 "$client" 0 2>&1) && fail "a call to an unregistered server succeeded"
[[ "$out" == *"the relay at 127.0.0.1:$port refused the connection to 'nobody': no server named 'nobody'"* ]] ||
  fail "a TLS client's refusal by the relay: $out"
[[ "$out" == *"does not speak TLS"* ]] && fail "the relay's refusal reported as a server without TLS: $out"
echo "relay_loopback: ok (relay port $port)"
