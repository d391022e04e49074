#!/usr/bin/env bash
# Ranks on "another host": a network namespace of their own, joined to this
# one by a veth pair, stands in for a compute node. ninfd stays here; its
# MPI jobs start inside the namespace (`ip netns exec NS mpirun`), so their
# rank 0 can reach ninfd only over TCP at the veth address (launch_address),
# and the test's client reaches rank 0 only at the namespace's address.
# Runs tests/e2e/remote_ranks_test.cc with NINF_TEST_NETNS and
# NINF_TEST_LAUNCH_ADDRESS set, and the Fortran EP and Linpack examples
# calling ep_mpi and pdgesv the same way; then kills whatever still runs in
# the namespace and removes it. Exit status 77 (Meson: skipped) when
# namespaces cannot be made here (not root, no `ip`).
#
#   remote_ranks.sh TEST_PROGRAM NINFD FORTRAN_EP FORTRAN_LINPACK
set -uo pipefail
test_program=$1 ninfd=$2 fortran_ep=$3 fortran_linpack=$4

ns=ninf-rr-$$
host_if=nrr$$h
node_if=nrr$$n
# A /30 of 10.231.0.0/16 per run, so concurrent runs do not collide.
net=$(( ($$ % 16000) * 4 ))
host_ip=10.231.$(( net / 256 )).$(( net % 256 + 1 ))
node_ip=10.231.$(( net / 256 )).$(( net % 256 + 2 ))

daemon=""
work=$(mktemp -d /tmp/ninf-remote-ranks.XXXXXX)
cleanup() {
  [[ -n "$daemon" ]] && kill -TERM "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  rm -rf "$work"
  # `ip netns del` leaves the processes inside running: end them first.
  local pids
  pids=$(ip netns pids "$ns" 2>/dev/null)
  [[ -n "$pids" ]] && kill -KILL $pids 2>/dev/null
  ip link del "$host_if" 2>/dev/null
  ip netns del "$ns" 2>/dev/null
}
trap cleanup EXIT

if ! command -v ip >/dev/null || ! ip netns add "$ns" 2>/dev/null; then
  echo "remote_ranks: cannot create a network namespace here (needs root and iproute2): skipped"
  exit 77
fi
if ! ip link add "$host_if" type veth peer name "$node_if" netns "$ns" ||
   ! ip addr add "$host_ip/30" dev "$host_if" || ! ip link set "$host_if" up ||
   ! ip -n "$ns" addr add "$node_ip/30" dev "$node_if" || ! ip -n "$ns" link set "$node_if" up ||
   ! ip -n "$ns" link set lo up; then
  echo "remote_ranks: cannot wire the namespace: skipped"
  exit 77
fi
echo "remote_ranks: ninfd at $host_ip, ranks in $ns at $node_ip"

failed=0
NINF_TEST_NETNS=$ns NINF_TEST_LAUNCH_ADDRESS=$host_ip NINF_TEST_NODE_ADDRESS=$node_ip \
  "$test_program" || failed=1

# The hops a redirected call crosses (docs/security.md "Hops": the launch
# channel of rank 0, the client's connection to it), recorded on the veth
# while remote_ranks_wire runs. In plaintext the arrays are seen (the
# recording works); with TLS neither the arrays, nor a frame header; in both
# the launch token never crosses.
here=$(dirname "$0")
pattern=adfa5c6d454a9340adfa5c6d454a9340adfa5c6d454a9340adfa5c6d454a9340  # 1234.5678 x4
doubled=adfa5c6d454aa340adfa5c6d454aa340adfa5c6d454aa340adfa5c6d454aa340  # 2469.1356 x4
frame_header=4e494e4601  # "NINF" 1: every frame's start
hex_of() { printf %s "$1" | od -An -tx1 | tr -d ' \n'; }
wire_run() {
  local mode=$1 sniffer tries=0 tls=()
  /usr/bin/python3 "$here/wire_sniff.py" record "$host_if" "$work/$mode.cap" >"$work/$mode.sniff" &
  sniffer=$!
  until grep -q recording "$work/$mode.sniff" 2>/dev/null || ((++tries > 100)); do sleep 0.05; done
  # tls: the client reaches ninfd over TLS and gets its REDIRECT inside that
  # session; tls-auto: over the same-host socket once its first contact
  # (TLS) has named it, and the leg to rank 0 is encrypted all the same.
  case $mode in
    tls) tls=(NINF_TEST_TLS_DIR="$work/pki" NINF_TLS_CA="$work/pki/ca.pem" NINF_TRANSPORT=tcp) ;;
    tls-auto) tls=(NINF_TEST_TLS_DIR="$work/pki" NINF_TLS_CA="$work/pki/ca.pem" NINF_TRANSPORT=auto) ;;
  esac
  env "${tls[@]}" NINF_TEST_NETNS="$ns" NINF_TEST_LAUNCH_ADDRESS="$host_ip" \
    NINF_TEST_NODE_ADDRESS="$node_ip" NINF_TEST_WIRE_TOKEN="$work/$mode.token" \
    "$test_program" "[wire]" || failed=1
  kill -TERM "$sniffer"
  wait "$sniffer"
}
bash "$here/../../scripts/site_ca.sh" "$work/pki" ca >/dev/null &&
  bash "$here/../../scripts/site_ca.sh" "$work/pki" server server 127.0.0.1 >/dev/null || failed=1
wire_run plain
/usr/bin/python3 "$here/wire_sniff.py" check "$work/plain.cap" --min-bytes 8000000 \
  --present "$pattern" --absent "$(hex_of "$(cat "$work/plain.token")")" || failed=1
for mode in tls tls-auto; do
  wire_run "$mode"
  /usr/bin/python3 "$here/wire_sniff.py" check "$work/$mode.cap" --min-bytes 8000000 \
    --absent "$pattern" --absent "$doubled" --absent "$frame_header" \
    --absent "$(hex_of "$(cat "$work/$mode.token")")" || failed=1
done

# Fortran clients, the parallel routines' ranks in the namespace.
source "$(dirname "$0")/fortran_parallel_checks.sh"
fortran_parallel_checks --mpi-ranks 2 --mpi-oversubscribe --launch-address "$host_ip" \
  --mpirun "ip netns exec $ns mpirun"
exit "$failed"
