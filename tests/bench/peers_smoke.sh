#!/usr/bin/env bash
# peers_smoke: bench/peers.sh --quick on loopback produces every peer's row
# of every workload, a table and a plot. Nothing is timed: the numbers of a
# smoke run on a loaded machine mean nothing, only their presence does.
#
#   bash tests/bench/peers_smoke.sh BUILD_DIR
set -euo pipefail
build=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/peers_smoke.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# peers.sh stops every server it starts and limits every client process
# (a hung peer fails it); this outer limit only catches peers.sh itself.
timeout --kill-after=10 240 bash "$src/bench/peers.sh" "$build" --quick --no-netns \
  --out "$tmp/peers.md" 2>"$tmp/peers.log" || {
  echo "peers_smoke: bench/peers.sh failed:" >&2
  tail -n 30 "$tmp/peers.log" >&2
  exit 1
}

raw="$tmp/peers.raw.txt"
missing=0
expect() {
  grep -q "^place=host peer=$1 workload=$2 size=$3 median=[0-9.]* " "$raw" ||
    { echo "peers_smoke: no row for $1 $2 size=$3" >&2; missing=1; }
}
for peer in ninf ninf-oneshot grpc zeromq dask; do
  expect "$peer" null 0
  expect "$peer" echo 1024
  expect "$peer" echo 65536
  expect "$peer" dgesv 200
  expect "$peer" rate 1
  expect "$peer" rate 4
done
expect ninf-fixed rate 1  # the fixed budget's yardstick: calls/s rows only
expect ninf-fixed rate 4
expect raw null 0
expect raw echo 1024
expect raw echo 65536
[[ -s $tmp/peers.png ]] || { echo "peers_smoke: no plot" >&2; missing=1; }
grep -q '^| echo 64 KiB | host |' "$tmp/peers.md" || { echo "peers_smoke: no table row" >&2; missing=1; }
cat "$tmp/peers.md"
[[ $missing -eq 0 ]] || { cat "$raw" >&2; exit 1; }
echo "peers_smoke: every peer, every workload"
