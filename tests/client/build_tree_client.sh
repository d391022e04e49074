#!/usr/bin/env bash
# Builds a C client against the build tree the documented way (README,
# docs/fortran.md: build/tools/ninfcc, from any folder) and runs it; no
# server needed. Meson's build/meson-uninstalled/ninf-uninstalled.pc is not
# that way: it has no Cflags and names a libdir that does not exist.
#
#   build_tree_client.sh NINFCC SOURCE
set -euo pipefail
ninfcc=$1 source=$2
work=$(mktemp -d /tmp/ninf-build-tree-client.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"  # any folder: the wrapper carries absolute paths

"$ninfcc" "$source" -o client
out=$(./client)
echo "$out"
[[ $out == "linked: cannot connect to the server" ]] || { echo "unexpected output" >&2; exit 1; }
# Compile and link as separate steps, as make does.
"$ninfcc" -c "$source" -o client.o
"$ninfcc" client.o -o client2
./client2 >/dev/null
