#!/usr/bin/env bash
# Configures (once) and builds the project into ${NINF_BUILD:-build}.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
BUILD=${NINF_BUILD:-build}
# NINF_WERROR=1 (set by CI) turns compiler warnings in the project's own code
# into errors.
werror=false
[ "${NINF_WERROR:-0}" = 1 ] && werror=true
# -Dpeers=true: the release build also compiles bench/peers/ (gRPC C++ and
# ZeroMQ peers of bench/peers.sh), so that its smoke test runs with the rest;
# the sanitizer, fuzz and TSan builds configure their own trees without it.
if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" --buildtype=release -Dwerror=$werror -Dpeers=true
else
  options=()
  if [ "$werror" = true ]; then options+=(-Dwerror=true); fi
  # A tree configured before the option existed gets it once (through
  # --reconfigure: `meson configure` refuses an option the tree has not
  # read from meson_options.txt yet).
  if [ "$(meson configure "$BUILD" 2>/dev/null | awk '$1 == "peers" { print $2 }')" != true ]; then
    options+=(-Dpeers=true)
  fi
  if [[ " ${options[*]} " == *" -Dpeers=true "* ]]; then
    meson setup --reconfigure "$BUILD" "${options[@]}" >/dev/null
  elif [ ${#options[@]} -gt 0 ]; then
    meson configure "$BUILD" "${options[@]}"
  fi
fi
ninja -C "$BUILD"
