#!/usr/bin/env bash
# tests/e2e/two_sites.sh SRC_DIR BUILD_DIR - the walk-through of
# docs/two_sites.md, run from the doc itself (issue 43: a two-site set-up
# with TLS, users on both daemons, a relayed site and the metaserver works
# from the docs alone, every tool included). Its ```sh blocks run in order,
# as written, in one shell, with free ports and a fresh folder; then what
# they left behind is checked:
#   - every placed and relayed call answered and checked (the CSVs);
#   - each tool's output: ninf-meta --status/--list/--links, ninfd --status
#     of site A and of site B through the relay, ninfd --list of site B;
#   - bob's dgesv refused by ninf-meta and by ninfd, each naming itself;
#   - ninf-loadtest sampled both servers (site B through the relay);
#   - the relay's and ninfd B's logs: TLS on the relay, B registered there;
#   - no daemon left running.
set -euo pipefail
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
work=$(mktemp -d /tmp/ninf-two-sites-test.XXXXXX)
script="$work/walkthrough.sh"
fail() {
  echo "FAIL: $*"
  for f in "$work"/site/*.log "$work"/site/*.txt; do
    [[ -f $f ]] && { echo "--- $f"; tail -n 15 "$f"; }
  done
  exit 1
}
session=""
cleanup() {
  # The walk-through runs in a session of its own: whatever a failed run
  # leaves there ends with it.
  [[ -z $session ]] || pkill -KILL -s "$session" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The doc's shell blocks, in order, as one script; its programs are the
# build folder's the test was given (the doc puts $PWD/build/*/ on PATH).
awk '/^```sh$/ {on=1; next} /^```$/ {on=0} on' "$src/docs/two_sites.md" |
  sed "s|\$PWD/build/|$build/|g" >"$script"
[[ $(grep -c . "$script") -gt 20 ]] || fail "docs/two_sites.md has no walk-through blocks"

export D="$work/site" META_PORT=$(free_port) RELAY_PORT=$(free_port) A_PORT=$(free_port)
(cd "$src" && exec setsid timeout 300 bash -euo pipefail "$script") >"$work/out.txt" 2>&1 &
session=$!
wait "$session" || { cat "$work/out.txt"; fail "the walk-through did not run through"; }
site=$D

# outcome is the CSV's 15th column: "ok" for an answered, checked call.
calls_ok() { awk -F, 'NR > 1 && $15 == "ok" {n++} END {print n + 0}' "$1"; }
calls() { awk 'NR > 1 {n++} END {print n + 0}' "$1"; }
[[ $(calls "$site/placed.csv") -eq 8 && $(calls_ok "$site/placed.csv") -eq 8 ]] ||
  fail "placed.csv: $(calls_ok "$site/placed.csv") of $(calls "$site/placed.csv") calls ok, not 8"
[[ $(calls "$site/relayed.csv") -eq 2 && $(calls_ok "$site/relayed.csv") -eq 2 ]] ||
  fail "relayed.csv: $(calls_ok "$site/relayed.csv") of $(calls "$site/relayed.csv") ok, not 2"
grep -q 'site-b@' "$site/relayed.csv" || fail "relayed.csv: no call went to site B"

grep -q '^placements:' "$site/meta-status.txt" || fail "ninf-meta --status: no placements line"
grep -q '^dgesv(' "$site/meta-list.txt" || fail "ninf-meta --list: no dgesv"
[[ -s $site/meta-links.txt ]] || fail "ninf-meta --links printed nothing"
for s in a b; do
  grep -q '^completed:' "$site/$s-status.txt" || fail "ninfd --status of site $s"
done
grep -q '^dgesv(' "$site/b-list.txt" || fail "ninfd --list of site B through the relay"

grep -q "ninf-meta: user 'bob' may not call 'dgesv'" "$site/bob-meta.txt" ||
  fail "bob through ninf-meta: $(cat "$site/bob-meta.txt")"
grep -q "ninfd: user 'bob' may not call 'dgesv' here" "$site/bob-direct.txt" ||
  fail "bob at site A: $(cat "$site/bob-direct.txt")"
grep -q "cannot sample" "$work/out.txt" && fail "ninf-loadtest could not sample: $(grep "cannot sample" "$work/out.txt")"
grep -q "event=listening.* tls=on" "$site/relay.log" || fail "the relay has no TLS"
grep -q "event=relay_state state=registered" "$site/b.log" || fail "site B never registered"
grep -q "event=metaserver_registered" "$site/b.log" || fail "site B never reached ninf-meta"

sleep 0.5
if pgrep -s "$session" >/dev/null; then fail "the walk-through's stop left daemons running"; fi
echo "ok two_sites: the walk-through of docs/two_sites.md ran as written; 8 placed and 2 relayed" \
  "calls, every tool over TLS, bob refused by both daemons"
