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
if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" --buildtype=release -Dwerror=$werror
elif [ "$werror" = true ]; then
  meson configure "$BUILD" -Dwerror=true
fi
ninja -C "$BUILD"
